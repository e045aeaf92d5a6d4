"""Shared fixtures of the course-tooling tests."""

import pytest

from pavlovlab.teach.exercises._core import Session


def _renew(module) -> None:
    for name, value in list(vars(module).items()):
        if isinstance(value, Session):
            setattr(module, name, value.book.session())


@pytest.fixture(autouse=True)
def fresh_sessions(request):
    """Every learner session a test module keeps at module level (``ex = attention.session()``) starts each
    test afresh, as in a new kernel: no attempts, no hints shown, no solution read. A test that needs a
    new learner part-way through calls the fixture's value: ``fresh_sessions()``."""
    _renew(request.module)
    return lambda: _renew(request.module)
