"""Moved to :mod:`shardpy.vault.ledger` (issue 27: the import ledger is a vault record, beside
``state.json``). Kept only while ``shardpy/flows/importflow.py`` still imports it from here;
deleted with that one import line."""

from shardpy.vault.ledger import Ledger as Ledger
from shardpy.vault.ledger import recording as recording
