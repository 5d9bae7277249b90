"""Apache Spark (local mode) runs the docs' example queries (the corpus schema page) over ``export parquet``'s output and gets
the answers DuckDB gives over the index: the Parquet is readable past one machine, as the docs say.

One Spark session for the module, one core, no UI, bounded by the test's timeout; skipped only when no Java
runtime is on the machine (Spark needs one) or pyspark is not installed (the dev extra).
"""

from __future__ import annotations

import datetime
import os
import shutil
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from mcpreel.corpus.index import index_paths
from mcpreel.corpus.parquet import export_parquet
from mcpreel.corpus.query import example_queries, run_sql
from mcpreel.corpus.schema import TABLES

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.timeout(600)


def _norm(value: Any) -> Any:
    if isinstance(value, (Decimal, float)):
        return round(float(value), 6)
    if isinstance(value, (datetime.date, datetime.datetime)):
        return value.isoformat()
    return value


@pytest.fixture(scope="module")
def spark():
    if shutil.which("java") is None:
        pytest.skip("no Java runtime on this machine: Spark needs one (Java 17)")
    pyspark_sql = pytest.importorskip("pyspark.sql", reason="pyspark is not installed (pip install -e '.[dev,full]'; make test does)")
    # the driver's listeners on loopback only (and no lookup of the machine's name, which can hang)
    os.environ["SPARK_LOCAL_IP"] = "127.0.0.1"
    session = (pyspark_sql.SparkSession.builder.master("local[1]").appName("mcpreel-corpus-test")
               .config("spark.driver.host", "127.0.0.1").config("spark.driver.bindAddress", "127.0.0.1")
               .config("spark.ui.enabled", "false").config("spark.sql.shuffle.partitions", "2")
               .config("spark.driver.memory", "512m").config("spark.sql.session.timeZone", "UTC").getOrCreate())
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()


@pytest.fixture(scope="module")
def exported(tmp_path_factory, fixtures_dir) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("spark")
    db = root / "corpus.duckdb"
    index_paths([fixtures_dir], db)
    export_parquet(db, root / "parquet")
    return db, root / "parquet"


def test_spark_gets_duckdbs_answers_from_the_parquet(spark, exported) -> None:
    db, parquet = exported
    for table in TABLES:
        spark.read.parquet(str(parquet / table.name)).createOrReplaceTempView(table.name)
    from tests.docs.pages import topic

    queries = example_queries(topic("corpus"))
    assert len(queries) >= 5
    for sql in queries:
        duck = run_sql(db, sql)
        assert duck.rows, f"the example query gives nothing on the fixtures, so it proves nothing: {sql}"
        rows = spark.sql(sql).collect()
        theirs = [tuple(_norm(v) for v in row) for row in rows]
        ours = [tuple(_norm(v) for v in row) for row in duck.rows]
        assert [c.lower() for c in rows[0].__fields__] == [c.lower() for c in duck.columns] if rows else True
        assert theirs == ours, sql


def test_every_table_and_column_reaches_spark(spark, exported) -> None:
    db, parquet = exported
    for table in TABLES:
        df = spark.read.parquet(str(parquet / table.name))
        assert sorted(df.columns) == sorted(c.name for c in table.columns)
        (count,) = run_sql(db, f"SELECT count(*) FROM {table.name}").rows[0]
        assert df.count() == count > 0
        assert dict(df.dtypes)["day"] == "date"
