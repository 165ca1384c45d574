"""The classroom's one time parser and its input checks (:mod:`dpcourse.classroom.validation`, issue 41)."""

from __future__ import annotations

import zoneinfo
from datetime import UTC, datetime, timedelta

import pytest

from dpcourse.classroom.cli import main
from dpcourse.classroom.validation import (
    TimeError,
    memory_bytes,
    number_in_range,
    parse_time,
    positive_number,
    student_id,
    time_or_none,
    time_zone,
)

NEW_YORK = zoneinfo.ZoneInfo("America/New_York")


@pytest.mark.parametrize(
    "text",
    ["2026-10-06T04:12:00Z", "2026-10-06T04:12:00 UTC", "2026-10-06T04:12:00.000000789Z", "2026-10-06T00:12-04:00"],
)
def test_every_lms_spelling_of_one_instant_reads_as_that_instant(text):
    assert parse_time(text) == datetime(2026, 10, 6, 4, 12, tzinfo=UTC)  # nanoseconds cut to microseconds


def test_a_time_without_offset_is_read_in_the_zone_and_refused_without_one():
    assert parse_time("2026-10-05T23:59", zone=NEW_YORK).utcoffset() == timedelta(hours=-4)
    with pytest.raises(TimeError, match="has no timezone offset") as caught:
        parse_time("2026-10-05T23:59")
    assert caught.value.kind == "no offset"


@pytest.mark.parametrize("text", ["2026-11-01T01:30:00", "2026-03-08T02:30:00"])
def test_a_time_daylight_saving_skips_or_repeats_is_refused(text):
    with pytest.raises(TimeError, match="skipped or repeated in America/New_York") as caught:
        parse_time(text, zone=NEW_YORK)
    assert caught.value.kind == "ambiguous"


@pytest.mark.parametrize("value", ["next friday", "", "2026-10-06T04:12:00Z" + " " * 60, 3, None])
def test_what_is_not_a_time_is_refused_and_unknown_to_the_lenient_reader(value):
    with pytest.raises(TimeError) as caught:
        parse_time(value)
    assert caught.value.kind == "unreadable"
    assert time_or_none(value) is None


def test_the_lenient_reader_reads_an_offset_less_time_in_its_zone():
    assert time_or_none("2026-10-06T04:12:00", zone=UTC) == datetime(2026, 10, 6, 4, 12, tzinfo=UTC)
    assert time_or_none("2026-10-06T04:12:00") is None


@pytest.mark.parametrize(("text", "kind", "expected"), [("3", int, 3), ("0.5", float, 0.5)])
def test_positive_numbers_read_back(text, kind, expected):
    assert positive_number(text, kind) == expected


@pytest.mark.parametrize(("text", "kind"), [("0", int), ("-1", float), ("1.5", int), ("inf", float), ("nan", float)])
def test_what_is_not_a_positive_finite_number_is_refused(text, kind):
    with pytest.raises(ValueError, match="expected a positive number"):
        positive_number(text, kind)


def test_an_infinite_cell_timeout_is_refused_by_the_command(capsys):
    with pytest.raises(SystemExit):
        main(["grade", "--cell-timeout", "inf", "whatever"])
    assert "expected a positive number, got 'inf'" in capsys.readouterr().err


def test_memory_amounts_read_in_binary_units_and_a_floor():
    assert memory_bytes("2G", 0) == 2 * 1024**3 and memory_bytes("512MiB", 0) == 512 * 1024**2
    with pytest.raises(ValueError, match="must look like 2G"):
        memory_bytes("lots", 0)
    with pytest.raises(ValueError, match="at least 2048M"):
        memory_bytes("1G", 2 * 1024**3)


def test_numbers_in_a_range_name_the_range():
    assert number_in_range(1, 0, 1) == 1.0
    with pytest.raises(ValueError, match="must be a number more than 0 and at most 100, got 0"):
        number_in_range(0, 0, 100, open_low=True)
    with pytest.raises(ValueError, match="must be a number from 0, got True"):
        number_in_range(True, 0)


def test_time_zones_and_student_ids():
    assert time_zone("Europe/Berlin").key == "Europe/Berlin"
    with pytest.raises(ValueError, match="not a time zone this machine knows"):
        time_zone("Mars/Olympus")
    assert student_id("obriensea\u0301n") == student_id("obriense\u00e1n")  # NFD and NFC: one student
