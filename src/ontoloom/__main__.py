"""``python -m ontoloom``: the same entry as the ``ontoloom`` console script.

It goes through :func:`ontoloom.entry.main`, not :mod:`ontoloom.cli`, so the fast hook path
and forwarding to a data dir's owner behave exactly as they do for the script.
"""

from ontoloom.entry import main

if __name__ == "__main__":
    main()
