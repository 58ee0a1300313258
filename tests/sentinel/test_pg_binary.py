"""The binary arrays and COPY stream ingest hands PostgreSQL read back exactly as the values sent:
every instant to the microsecond whatever its offset, extreme floats and ids, empty arrays."""

from datetime import UTC, datetime, timedelta, timezone

import psycopg
import pytest
from django.db import connection

from sentinel.services.pg_binary import (
    Float8Array,
    Int8Array,
    TimestamptzArray,
    binary_arrays,
    copy_samples,
    pg_microseconds,
)

pytestmark = pytest.mark.django_db

TIMES = [
    datetime(1, 1, 2, tzinfo=UTC),  # the earliest ingest accepts
    datetime(1999, 12, 31, 23, 59, 59, 999999, tzinfo=UTC),  # before PostgreSQL's epoch: negative
    datetime(2000, 1, 1, tzinfo=UTC),
    datetime(2026, 11, 30, 22, 15, 0, 123456, tzinfo=timezone(timedelta(hours=5, minutes=30))),
    datetime(2026, 11, 30, 22, 15, 0, 1, tzinfo=timezone(-timedelta(hours=9))),
    datetime(9999, 12, 31, 23, 59, 59, 999999, tzinfo=UTC),
]
IDS = [-(2**63), -1, 0, 1, 2**31, 2**63 - 1]
VALUES = [-1.7976931348623157e308, -0.0, 5e-324, 0.1, 2.5, 1.7976931348623157e308]


@pytest.fixture
def cursor():
    if connection.vendor != "postgresql":
        pytest.skip("PostgreSQL's binary formats")
    connection.ensure_connection()
    with binary_arrays(psycopg.Cursor(connection.connection)) as cursor:
        yield cursor


def test_arrays_read_back_exactly(cursor):
    cursor.execute(
        "SELECT %b::int8[], %b::timestamptz[], %b::float8[]",
        (Int8Array.of(IDS), TimestamptzArray.of(pg_microseconds(TIMES)), Float8Array.of(VALUES)),
    )
    ids, times, values = cursor.fetchone()
    assert ids == IDS
    assert times == TIMES  # aware datetimes compare as instants
    assert [repr(v) for v in values] == [repr(v) for v in VALUES]  # -0.0 and the subnormal survive


def test_empty_arrays_are_empty(cursor):
    cursor.execute("SELECT cardinality(%b::int8[]), cardinality(%b::float8[])", (Int8Array.of([]), Float8Array.of([])))
    assert cursor.fetchone() == (0, 0)


def test_the_copy_stream_stores_each_row_as_sent(cursor):
    cursor.execute("CREATE TEMPORARY TABLE copied (signal_id int8, time timestamptz, value float8) ON COMMIT DROP")
    with cursor.copy("COPY copied (signal_id, time, value) FROM STDIN (FORMAT BINARY)") as copy:
        copy.write(copy_samples(IDS, pg_microseconds(TIMES), VALUES))
    cursor.execute("SELECT signal_id, time, value FROM copied ORDER BY signal_id")
    assert cursor.fetchall() == list(zip(IDS, TIMES, VALUES, strict=True))
