"""Real-browser tests of the course (a package, so that its conftest does not shadow tests/conftest.py)."""
