"""Exercise checkers. Each notebook's checkers live in a module named after its concept
(``pavlovlab.teach.exercises.conditioning``, ...), where every exercise is declared once, next to its checker
(``@BOOK.exercise(number, title, kind=..., hints=[...])``). A notebook opens a learner's session,
``ex = conditioning.session()``, and calls ``ex.check_...``, ``ex.hint(n)``, ``ex.solution(n)``, ``ex.progress()``.
The checkers compare the learner's function or value with the package on several cases, or judge a designed
measurement, and print a friendly verdict, never a traceback. docs/authoring-exercises.md says how to add one.
"""

from ._core import Book, Exercise, Session, books, check_function, check_measurement, check_value, verdict

__all__ = ["Book", "Exercise", "Session", "books", "check_function", "check_measurement", "check_value", "verdict"]
