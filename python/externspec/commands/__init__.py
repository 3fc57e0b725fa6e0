"""The subcommands of the `externspec` command, one module each (registered in `externspec.cli`).

Shared helpers: `_documents` (reading and recognising files), `_terminal` (tables, colour,
progress), `_slots` (the call ABI's slot counts of a node, from the op's torch schema).
"""
