"""Optional dependencies ("extras") and the error a missing one raises.

Some environments and agents need packages that a plain ``pip install lorekit``
does not bring (Crafter needs ``crafter``, ``numba``, ...). They are imported
lazily, so the failure shows up as a ``ModuleNotFoundError`` deep inside a
factory. :func:`requires_extra` turns that into a :class:`MissingExtraError`
that names the feature and the install command, which the CLI prints as one
line. This module imports nothing of LoreKit, so every layer may use it.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager


class MissingExtraError(ImportError):
    """A feature needs an optional package that is not installed.

    ``install`` says how to fix it (a pip command when the extra is known).
    Subclasses ``ImportError`` so code that already guards imports keeps working.
    """

    def __init__(self, message: str, *, module: str | None, install: str) -> None:
        super().__init__(message, name=module)
        self.install = install


def install_command(extra: str) -> str:
    """How to install LoreKit's optional extra ``extra``."""
    return f"pip install 'lorekit[{extra}]'"


@contextmanager
def requires_extra(what: str, extra: str | None) -> Iterator[None]:
    """Translate a missing third-party module inside the block into a
    :class:`MissingExtraError` for ``what`` (e.g. "the 'crafter' environment").

    Only modules outside LoreKit count: a missing ``lorekit.*`` module is a bug
    in LoreKit, not a missing extra, and is left alone. Without an ``extra``
    the message names the missing package itself.
    """
    try:
        yield
    except MissingExtraError:
        raise
    except ModuleNotFoundError as exc:
        module = exc.name or ""
        if not module or module.split(".")[0] == "lorekit":
            raise
        root = module.split(".")[0]
        if extra is not None:
            install = install_command(extra)
            message = (
                f"{what} needs the {extra} extra (module {root!r} is not installed): {install}"
            )
        else:
            install = f"install the package that provides the module {root!r}"
            message = f"{what} needs the Python module {root!r}, which is not installed: {install}"
        raise MissingExtraError(message, module=module, install=install) from exc


def extra_installed(extra: str, dist: str = "lorekit") -> bool | None:
    """Whether every package of ``dist``'s extra ``extra`` is installed.

    None when it cannot be told (running from a source tree without package
    metadata, or an extra the metadata does not declare). Read from the
    installed metadata, so it never imports the (possibly heavy) packages.
    """
    import re
    from importlib import metadata

    try:
        requirements = metadata.requires(dist) or []
    except metadata.PackageNotFoundError:
        return None
    marker = re.compile(r"""extra\s*==\s*["']""" + re.escape(extra) + r"""["']""")
    names = []
    for req in requirements:
        spec, _, markers = req.partition(";")
        match = re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)", spec)
        if match and marker.search(markers) and match.group(1).lower() != dist:
            names.append(match.group(1))
    if not names:
        return None
    for name in names:
        try:
            metadata.version(name)
        except metadata.PackageNotFoundError:
            return False
    return True
