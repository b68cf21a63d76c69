"""minidynamo: a readable TorchDynamo, built one chapter at a time.

Import layering, lowest first; a module imports only from layers below it:

    bytecode -> variables / sources -> translator -> output_graph / side_effects
    -> resume -> guards -> convert_frame -> backends -> api
"""
