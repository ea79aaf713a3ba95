"""gradviz's data files (the built-in demos), installed as the package ``gradviz.resources``.

The folder stays at the top of the repository; pyproject.toml maps it into the
wheel. Read it through :func:`gradviz.app.demos.demo_dir`, never by a path
relative to the source tree.
"""
