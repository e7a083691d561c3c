"""Where the frontmatter grammar used to live: it is :mod:`shardpy.notes.frontmatter` now (issue 25).

Kept as a re-export for the readers not moved yet (serve, index, graph,
importers); new code imports the notes package.
"""

from shardpy.notes.frontmatter import (
    Split as Split,
)
from shardpy.notes.frontmatter import (
    _line_keys as _line_keys,
)
from shardpy.notes.frontmatter import (
    _plain_block_keys as _plain_block_keys,
)
from shardpy.notes.frontmatter import (
    as_list as as_list,
)
from shardpy.notes.frontmatter import (
    as_text as as_text,
)
from shardpy.notes.frontmatter import (
    fenced_block as fenced_block,
)
from shardpy.notes.frontmatter import (
    load_yaml as load_yaml,
)
from shardpy.notes.frontmatter import (
    render_block as render_block,
)
from shardpy.notes.frontmatter import (
    simple_keys as simple_keys,
)
from shardpy.notes.frontmatter import (
    simple_mapping as simple_mapping,
)
from shardpy.notes.frontmatter import (
    split_fences as split_fences,
)
from shardpy.notes.frontmatter import (
    split_frontmatter as split_frontmatter,
)
from shardpy.notes.frontmatter import (
    yaml_item as yaml_item,
)
from shardpy.notes.frontmatter import (
    yaml_scalar as yaml_scalar,
)
