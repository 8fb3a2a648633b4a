"""Importing an Alertmanager configuration (`alertmanager.yml`) as notifiers and a routing document.

    text --yamltext--> a checked YAML tree --receivers/routes--> a draft (notifiers by name, a document naming
    them, losses) --plan--> what would change here (create / update / keep each notifier) --apply--> stored

Nothing is lost silently: every field Beacon cannot honour is a `Loss` (its path in the YAML and why); the import
is refused while there are losses unless the caller accepts them. The same file imported twice changes nothing
the second time: notifiers are found again by name, and an unchanged document is not written.
"""
