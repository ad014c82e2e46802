"""Content in and out of Quire at the command line: markdown import (live or for review) and
the demo site that `make run` loads. It sits above wiki/, reviews/ and agents/ and uses their
services like any other door."""
