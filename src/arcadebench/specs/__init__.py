"""Protocol specs: the YAML files shipped here and their typed, validated loader.

The specs are the single source of truth: every setting, game list, constant and reporting rule
a paper defines is read from them, and nothing else in the package hard-codes a protocol.
"""

from arcadebench.specs.loader import list_specs, load_spec, parse_spec
from arcadebench.specs.model import Spec

__all__ = ["Spec", "list_specs", "load_spec", "parse_spec"]
