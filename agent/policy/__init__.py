"""Permission modes, path rules and the tool-layer guard, all built on the approval seam.

- ``targets``: the canonical root-relative path a call would really touch;
- ``sensitive``: the built-in sensitive-path lists and ``--allow-path``/``--deny-path`` rules;
- ``rules``: those rules, and the redaction-placeholder refusal, as approval hooks;
- ``modes``: ``read-only``, ``edit``, ``ask``, ``full`` as approval hooks;
- ``ask``: the terminal approver behind ``ask``;
- ``guard``: secret redaction of every tool result, and the audit of every call;
- ``setup``: all of it put together, as the CLI uses it.
"""
