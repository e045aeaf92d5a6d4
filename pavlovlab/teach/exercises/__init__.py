"""Exercise checkers. Each notebook's checkers live in a module named after the notebook
(``pavlovlab.teach.exercises.pavlovian_conditioning`` for ``01_pavlovian_conditioning``, ...), where every exercise is
declared once, next to its checker (``@BOOK.exercise(number, title, kind=..., hints=[...])``). A notebook's set-up
imports its module as ``ex`` and starts the learner's session, ``ex.start()``; then it calls ``ex.check_...``,
``ex.hint(n)``, ``ex.solution(n)``, ``ex.reveal(n)``, ``ex.progress()``. The checkers compare the learner's function or
value with the package on several cases, or judge a designed measurement, and print a friendly verdict, never a
traceback. docs/authoring-exercises.md says how to add one.

The machinery, one job per module: :mod:`.registry` (the declared exercises, the nine checker modules by name),
:mod:`.session` (the learner's session and its progress file), :mod:`.book` (a notebook's book: the declaring
decorator and the learner's calls), :mod:`.checking` (the comparison policy and the checkers), :mod:`.runner` (the
learner's code in a thread with a time limit), :mod:`.fingerprint` (is this answer new?) and :mod:`.name_errors`
(one sentence for a cell run too early).
"""
