"""Exercise checkers. Each notebook's checkers live in a module named after its concept
(``pavlovlab.teach.exercises.conditioning``, ...); they compare the learner's function or value with the
package on several random cases and print a friendly verdict, never a traceback.

A stub the learner has not filled in raises ``NotImplementedError``; the checkers say so kindly.
"""

from ._core import check_function, check_value, verdict

__all__ = ["check_function", "check_value", "verdict"]
