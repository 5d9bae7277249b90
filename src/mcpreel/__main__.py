"""``python -m mcpreel`` runs the command line."""

from mcpreel.cli import main

if __name__ == "__main__":
    main()
