"""The session corpus: every session file you have, indexed in one embedded DuckDB database.

- :mod:`~mcpreel.corpus.schema`: the four tables (``files``, ``sessions``, ``operations``, ``tools``), versioned;
- :mod:`~mcpreel.corpus.db`: where the index lives, opening it, the writers' lock;
- :mod:`~mcpreel.corpus.index`: ``mcpreel index``, the incremental streaming indexer (and ``--watch``);
- :mod:`~mcpreel.corpus.query`: ``mcpreel query`` and the named questions (``mcpreel sessions``);
- :mod:`~mcpreel.corpus.show`: ``mcpreel show``, an operation's messages read back from its file;
- :mod:`~mcpreel.corpus.page`: the corpus report (``mcpreel report --db``);
- :mod:`~mcpreel.corpus.parquet`: ``mcpreel export parquet``, the tables as Parquet partitioned by day.

The index holds no bodies: what was said stays in the session files, which every row names (file and line).
It is built on the one reading of a session (:mod:`mcpreel.operations`), so its counts are ``inspect``'s.
"""
