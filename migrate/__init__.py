"""cuda2tile: migrate CUDA C++ kernels to TileLang."""
from pathlib import Path as _Path

__version__ = "0.1.0"

# Installed, `migrate.runtime` maps to the top-level runtime/ folder (pyproject's package-dir).
# Run from a source checkout without installing (a GPU machine given only the working tree),
# the same folder is found through the package path.
_checkout_runtime = _Path(__file__).resolve().parent.parent / "runtime"
if not (_Path(__file__).resolve().parent / "runtime").is_dir() and (_checkout_runtime / "__init__.py").is_file():
    __path__.append(str(_checkout_runtime.parent))  # type: ignore[name-defined]  # noqa: F821
