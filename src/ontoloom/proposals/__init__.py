"""Proposals: relations (and objects) someone or something suggested, kept apart from the
trusted graph — reified in the proposals graph, never as the bare triple — until a person
confirms them. Builds on ``records``; ``records`` never imports this package."""
