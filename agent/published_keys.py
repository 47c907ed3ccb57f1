"""Keys in a real service's exact format that are published on purpose, in documentation or in a
project's own public source, so that finding one says nothing about the text it is in: the
scanner does not report them (:mod:`agent.secret_scanner`).

A value is listed here only where gitleaks' own rules allowlist it by its exact value (its rules
``gcp-api-key``, ``nuget-config-password`` and ``generic-api-key``, gitleaks commit
``b58d3f10``), and only with where it was published. A key of the same shape that differs in a
single character is reported as usual. AWS's documentation keys (``AKIAIOSFODNN7EXAMPLE``) need
no entry: the word ``EXAMPLE`` in them already marks them (``agent.secret_scanner.placeholder_token``).
"""

from __future__ import annotations

PUBLISHED_KEYS: frozenset[str] = frozenset(
    {
        # The Google API keys in firebase-android-sdk's test resources and test code
        # (github.com/firebase/firebase-android-sdk), copied into many Firebase projects' tests.
        "AIzaSyabcdefghijklmnopqrstuvwxyz1234567",
        "AIzaSyAnLA7NfeLquW1tJFpx_eQCxoX-oo6YyIs",
        "AIzaSyCkEhVjf3pduRDt6d1yKOMitrUEke8agEM",
        "AIzaSyDMAScliyLx7F0NPDEJi1QmyCgHIAODrlU",
        "AIzaSyD3asb-2pEZVqMkmL6M9N6nHZRR_znhrh0",
        "AIzayDNSXIbFmlXbIE6mCzDLQAqITYefhixbX4A",
        "AIzaSyAdOS2zB6NCsk1pCdZ4-P6GBdi_UUPwX7c",
        "AIzaSyASWm6HmTMdYWpgMnjRBjxcQ9CKctWmLd4",
        "AIzaSyANUvH9H9BsUccjsu2pCmEkOPjjaXeDQgY",
        "AIzaSyA5_iVawFQ8ABuTZNUdcwERLJv_a_p4wtM",
        "AIzaSyA4UrcGxgwQFTfaI3no3t7Lt1sjmdnP5sQ",
        "AIzaSyDSb51JiIcB6OJpwwMicseKRhhrOq1cS7g",
        "AIzaSyBF2RrAIm4a0mO64EShQfqfd2AFnzAvvuU",
        "AIzaSyBcE-OOIbhjyR83gm4r2MFCu4MJmprNXsw",
        "AIzaSyB8qGxt4ec15vitgn44duC5ucxaOi4FmqE",
        "AIzaSyA8vmApnrHNFE0bApF4hoZ11srVL_n0nvY",
        # The sample passwords of Microsoft's nuget.config reference
        # (learn.microsoft.com/en-us/nuget/reference/nuget-config-file).
        "33f!!lloppa",
        "hal+9ooo_da!sY",
        # The public, search-only Algolia key that yarn's own release bundles (every
        # ``.yarn/releases/yarn-*.cjs`` holds it; github.com/yarnpkg/berry/issues/6201).
        "6fe4476ee5a1832882e326b506d14126",
    }
)
