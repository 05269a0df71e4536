"""The output folder: what may be written into it, and what cuda2tile wrote there.

- :func:`overlap` refuses an OUT that is a source folder or holds a source given on the command
  line (M9004); an OUT inside a source folder is fine, the walk skips it.
- :class:`Manifest` keeps ``OUT/.cuda2tile-manifest.json``, the relative paths of the files the
  tool wrote into OUT. :meth:`Manifest.open` refuses an OUT holding other files (M9005) unless
  forced; :meth:`Manifest.close` lists what this command wrote (every file that is new or changed
  since it began) and, after a conversion, removes the files of the previous conversion that this
  one did not write again. A file the tool did not write is never removed.

While a command runs, the manifest names the files that were in OUT before it and are not the
tool's (``"complete": false``), so a command that is killed leaves a folder the next one still
recognises as its own.
"""
from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

MANIFEST = ".cuda2tile-manifest.json"
#: Folders whose files later commands reuse (recorded runs and their traces): a conversion keeps
#: them even when it did not write them again.
KEPT = ("traces", "run")


class OutputError(Exception):
    """OUT cannot be used: ``code`` (M9004, M9005) and the message say why. Exit status 2."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


def overlap(out_dir: Path, paths: list[str]) -> None:
    """Raise M9004 when OUT is, or contains, one of the source ``paths`` given to convert."""
    out = out_dir.resolve()
    for p in paths:
        src = Path(p).resolve()
        if src == out:
            raise OutputError("M9004", f"the output folder {out_dir} is the source {'folder' if src.is_dir() else 'file'} "
                                       f"{p}: nothing was written (choose another -o, e.g. {Path(p) / 'out'})")
        if src.is_relative_to(out):
            raise OutputError("M9004", f"the output folder {out_dir} contains the source {p}: converting into it "
                                       "would put outputs among the sources; nothing was written "
                                       "(choose an -o that holds no source)")


def _walk(out_dir: Path) -> dict[str, tuple]:
    """Every file (and link) under OUT but the manifest: relative path -> what shows a rewrite."""
    found = {}
    for root, dirs, files in os.walk(out_dir):
        for name in files + [d for d in dirs if os.path.islink(os.path.join(root, d))]:
            path = os.path.join(root, name)
            rel = os.path.relpath(path, out_dir)
            if rel == MANIFEST:
                continue
            try:
                st = os.lstat(path)
            except OSError:
                continue
            found[Path(rel).as_posix()] = (st.st_ino, st.st_size, st.st_mtime_ns)
    return found


def _read(out_dir: Path) -> dict | None:
    try:
        data = json.loads((out_dir / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or data.get("tool") != "cuda2tile":
        return None
    return data


def _write(out_dir: Path, data: dict) -> None:
    """Write the manifest atomically (a temporary file renamed over it)."""
    tmp = out_dir / (MANIFEST + f".{os.getpid()}.tmp")
    tmp.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
    os.replace(tmp, out_dir / MANIFEST)


def _bytecode_of(rel: str, ours: set[str]) -> bool:
    """``rel`` is what Python caches when it imports one of the tool's modules
    (``a/__pycache__/x.cpython-311.pyc`` for ``a/x.py``)."""
    p = PurePosixPath(rel)
    if p.parent.name != "__pycache__" or p.suffix != ".pyc":
        return False
    return (p.parent.parent / (p.name.split(".", 1)[0] + ".py")).as_posix() in ours


def _try_write(out_dir: Path, data: dict) -> None:
    try:
        _write(out_dir, data)
    except OSError:  # a folder checked read-only (check --from OUT) keeps its manifest as it was
        pass


def _legacy(out_dir: Path) -> set[str]:
    """The files an earlier cuda2tile that kept no manifest wrote, as its report.json names them."""
    try:
        report = json.loads((out_dir / "report.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return set()
    if not isinstance(report, dict) or report.get("tool") != "cuda2tile":
        return set()
    names = {"report.json", "report.html", "stats.csv", "report.sarif", "examine.json"}
    for entry in report.get("files", []):
        for key in ("output", "original", "spec"):
            if isinstance(entry, dict) and isinstance(entry.get(key), str):
                names.add(Path(entry[key]).as_posix())
    return names


@dataclass
class Manifest:
    out_dir: Path
    before: dict[str, tuple]                 # OUT's files when the command began
    foreign: set[str]                        # of those, the ones the tool did not write
    previous: set[str] = field(default_factory=set)  # a complete earlier manifest's files
    stamps: dict = field(default_factory=dict)       # and their size and time as the tool left them

    @classmethod
    def open(cls, out_dir: Path, *, refuse_foreign: bool = False, force: bool = False,
             create: bool = False) -> "Manifest":
        """Begin a command that writes into ``out_dir`` (``create``: making it). With
        ``refuse_foreign`` (convert), files the tool did not write are an error (M9005) unless
        ``force``."""
        before = _walk(out_dir) if out_dir.is_dir() else {}
        data = _read(out_dir) if out_dir.is_dir() else None
        previous: set[str] = set()
        stamps = {}
        if data is None:  # no manifest: an output folder of a cuda2tile that kept none, or not the tool's
            previous = _legacy(out_dir) & set(before)
            foreign = set(before) - previous
        elif data.get("complete", True):
            previous = {str(f) for f in data.get("files", [])}
            stamps = data.get("stamps") if isinstance(data.get("stamps"), dict) else {}
            foreign = set(before) - previous
        else:  # a command that did not finish: every file but those it found foreign is the tool's
            foreign = set(before) & {str(f) for f in data.get("foreign", [])}
        ours = set(before) - foreign
        foreign = {f for f in foreign if not _bytecode_of(f, ours)}  # Python's cache of an emitted module
        if foreign and refuse_foreign and not force:
            names = sorted(foreign)
            shown = ", ".join(repr(n) if not n.isprintable() else n for n in names[:5])
            more = f" and {len(names) - 5} more" if len(names) > 5 else ""
            raise OutputError("M9005", f"the output folder {out_dir} holds {len(names)} file(s) cuda2tile did not "
                                       f"write: {shown}{more}; nothing was written (choose another -o, remove "
                                       "them, or pass --force)")
        manifest = cls(out_dir, before, foreign, previous, stamps)
        if create:
            out_dir.mkdir(parents=True, exist_ok=True)
        if out_dir.is_dir():
            _try_write(out_dir, manifest._data(complete=False))
        return manifest

    def _data(self, complete: bool, stamps: dict | None = None) -> dict:
        from . import __version__
        if complete:
            stamps = stamps or {}
            return {"tool": "cuda2tile", "version": __version__, "complete": True, "files": sorted(stamps),
                    "stamps": {f: stamps[f] for f in sorted(stamps)}}
        return {"tool": "cuda2tile", "version": __version__, "complete": False, "foreign": sorted(self.foreign)}

    def close(self, *, remove_stale: bool = False) -> tuple[list[str], list[str]]:
        """End the command: the manifest lists the tool's files. With ``remove_stale`` (a
        conversion), files of the previous complete manifest that this command did not write
        again are removed first (except under :data:`KEPT`), unless they changed since the tool
        wrote them: those are kept and become the user's. Returns (removed, kept) paths."""
        if not self.out_dir.is_dir():
            return [], []
        now = _walk(self.out_dir)
        written = {f for f, stat in now.items() if self.before.get(f) != stat}
        removed, kept = [], []
        if remove_stale:
            for f in sorted((self.previous & set(now)) - written):
                if f.split("/", 1)[0] in KEPT:
                    continue
                if f not in self.stamps:  # named by an earlier cuda2tile's report: kept, still the tool's
                    continue
                if self.stamps[f] != _stamp(now[f]):  # edited since cuda2tile wrote it: the user's now
                    kept.append(f)
                    continue
                path = self.out_dir / f
                try:
                    path.unlink()
                except OSError:
                    continue
                removed.append(f)
                _prune(path.parent, self.out_dir)
            now = _walk(self.out_dir)
        # foreign files this command did not write stay the user's; everything else is the tool's
        ours = {f for f in now if (f not in self.foreign or f in written) and f not in kept}
        stamps = {f: _stamp(now[f]) if f in written or f not in self.stamps else self.stamps[f] for f in ours}
        _try_write(self.out_dir, self._data(complete=True, stamps=stamps))
        return removed, kept


def _stamp(stat: tuple) -> list:
    """What the manifest keeps of a file to see later whether it changed: size, modification time."""
    return [stat[1], stat[2]]


def _prune(folder: Path, out_dir: Path) -> None:
    """Remove ``folder`` and its parents up to OUT while they are empty (a stale module's folder)."""
    out = out_dir.resolve()
    folder = folder.resolve()
    while folder != out and folder.is_relative_to(out):
        try:
            folder.rmdir()
        except OSError:
            return
        folder = folder.parent
