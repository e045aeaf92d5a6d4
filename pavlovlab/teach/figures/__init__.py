"""The figures and widget panels of each notebook, in a module named after the notebook (as the exercise checkers
are): a widget cell is one readable call with its sliders, the drawing code lives here, tested."""
