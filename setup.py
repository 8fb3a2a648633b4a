"""Packaging beyond what pyproject.toml can say: the wheel carries migrations/ and templates/ (top-level folders
of the repository, beside app/) as app/migrations and app/templates, so that an installed Beacon can migrate and
render; `app.settings` looks for them in either place. tests/packaging/test_wheel.py installs the wheel."""

from setuptools import Extension, find_namespace_packages, setup

packages = find_namespace_packages(include=["app*", "adapters*"])
# The client (client/, a distribution of its own: `pip install ./client`) ships in Beacon's wheel too: the server
# reads the notations it shares with the client (beacon_client.notation) from there, and `beacon` offers the
# client's commands. One copy of the source, installed by either distribution.
client = find_namespace_packages(where="client", include=["beacon_client*"])
# Subfolders of migrations/ and templates/ are listed too: package data of a folder setuptools does not know as a
# package would be left out (or warned about).
shipped = {"app.migrations": "migrations", "app.templates": "templates"}
for target, folder in list(shipped.items()):
    for sub in find_namespace_packages(where=folder):
        shipped[f"{target}.{sub}"] = f"{folder}/{sub.replace('.', '/')}"

setup(
    # The compiled row builder of ingestion (app/ingest/_fastrows.c). Optional: without a C compiler the install
    # goes on, and app/ingest/rows.py's general path serves every event (the same rows, slower).
    # And the OTLP log reader (app/shippers/otlp/_otlpfast.c), optional the same way: without it upb's messages
    # serve (app/shippers/otlp/protobuf.py, the same events, slower).
    ext_modules=[
        Extension("app.ingest._fastrows", ["app/ingest/_fastrows.c"], extra_compile_args=["-O2"], optional=True),
        Extension(
            "app.shippers.otlp._otlpfast", ["app/shippers/otlp/_otlpfast.c"], extra_compile_args=["-O2"], optional=True
        ),
    ],
    packages=[*packages, *client, *shipped],
    package_dir={"beacon_client": "client/beacon_client", **shipped},
    package_data={
        "beacon_client": ["py.typed"],
        "app.migrations": ["script.py.mako"],
        "app.ui.static": ["*"],
        "app.ui.static.swagger-ui": ["*"],  # Swagger UI's files, vendored: /docs works offline
        "app.query": ["GRAMMAR.md"],
        **{name: ["*"] for name in shipped if name.startswith("app.templates")},
    },
)
