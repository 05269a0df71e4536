"""Model-to-model normalisations, one per file: each returns a function every later pass can
read more simply (device functions inlined, vectors as lanes, names made unique, returns as
guards, pointer views folded, index idioms named)."""
