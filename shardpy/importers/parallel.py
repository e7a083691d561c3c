"""Moved to :mod:`shardpy.workers` (issue 25). Kept only while ``shardpy/index/build.py`` still
imports it from here; deleted with that one import line."""

from shardpy.workers import available_workers as available_workers
from shardpy.workers import run_stream as run_stream
