"""The subcommands of the `externspec` command, one module each (registered in `externspec.cli`).

Shared helpers: `_documents` (reading and recognising files), `_terminal` (tables, colour,
progress), `_ops` (`--load`: registering custom ops). Slot counts come from the executors' own
planner (`externspec.abi.layout.node_layout`).
"""
