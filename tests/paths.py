"""Where the tests find the repository, their fixtures and goldens, whatever folder they are in."""
from pathlib import Path

TESTS = Path(__file__).resolve().parent
REPO = TESTS.parent
FIXTURES = TESTS / "fixtures"
GOLDEN = TESTS / "golden"
CORPUS = REPO / "corpus"
