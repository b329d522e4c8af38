"""Protocol specs: the YAML files shipped here and their typed, validated loader.

The specs are the single source of truth: every setting, game list, constant and reporting rule
a paper defines is read from them, and nothing else in the package hard-codes a protocol.
:func:`arcadebench.specs.diff.diff` compares two of them (``arcadebench.diff``; the function
is not re-exported here, so that ``arcadebench.specs.diff`` stays the module).
"""

from arcadebench.specs.diff import SpecDiff
from arcadebench.specs.loader import list_specs, load_spec, parse_spec, read_yaml, spec_reference
from arcadebench.specs.model import Spec

__all__ = [
    "Spec",
    "SpecDiff",
    "list_specs",
    "load_spec",
    "parse_spec",
    "read_yaml",
    "spec_reference",
]
