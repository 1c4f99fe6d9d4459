"""The evalwh error hierarchy: every error a user can cause is an EvalWhError."""

from __future__ import annotations

import enum
import math
import re


class EvalWhError(Exception):
    """Root of every error evalwh raises on purpose; the CLI prints it as ``Error: ...``."""


class SchemaError(EvalWhError):
    """The warehouse schema is missing, newer than this version, or inconsistent."""


class WarehouseLockedError(EvalWhError):
    """Another process holds the warehouse file open for writing."""


class WarehouseClosedError(EvalWhError):
    """A job asked of a ``Warehouse`` after its ``close()`` (by this thread or another)."""


class IngestError(EvalWhError):
    """A run or qrels input is malformed; names the file, the line and the problem."""

    def __init__(self, path: str, line: int | None, problem: str) -> None:
        self.path = path
        self.line = line
        self.problem = problem
        where = f"{path}:{line}" if line is not None else path
        super().__init__(f"{where}: {problem}")


class ReplaceError(IngestError):
    """A qrels set or run of that name is already stored with other content.

    ``evalwh ingest qrels --replace`` or ``evalwh ingest runs --replace`` (``command``) would
    replace it; the message says "use --replace", which the caller of those commands has. A
    command without that option (``eval --into``, ``report``) raises :meth:`elsewhere`, whose
    message names the command instead.
    """

    def __init__(
        self, path: str, clash: str, command: str, advice: str = "use --replace to replace it"
    ) -> None:
        self.clash = clash
        self.command = command
        super().__init__(path, None, f"{clash}; {advice}")

    def elsewhere(self) -> ReplaceError:
        """The same refusal, advising ``evalwh <command> --replace`` by name."""
        advice = f"use `evalwh {self.command} --replace` to replace it"
        return ReplaceError(self.path, self.clash, self.command, advice)


class NotFoundError(EvalWhError):
    """A collection, run or qrels set that a command names does not exist."""


class UnknownMetricError(EvalWhError):
    """A metric name that the registry does not know."""


class MetricParamError(EvalWhError):
    """A metric parameter that is unknown or has an invalid value."""


class QueryError(EvalWhError):
    """A query failed; wraps the DuckDB error with the query's name and parameters."""


class InsufficientDataError(EvalWhError):
    """A statistic cannot be computed from the data given (too few topics or runs)."""


class ArgumentError(EvalWhError, ValueError):
    """An argument outside its domain: a choice that is not one, a negative seed, ``nan``.

    A ``ValueError`` too, as Python's own checks of an argument's value are, so that code
    written against them still catches it.
    """


class Choice(str, enum.Enum):
    """A string enumeration whose unknown values are :class:`ArgumentError` naming the choices.

    The message calls the value by the class's name in lower case, or by its ``__noun__``.

    Examples:
        >>> class Test(Choice):
        ...     t = "t"
        ...     sign = "sign"
        >>> Test("sign").value
        'sign'
        >>> Test("ttest")
        Traceback (most recent call last):
        ...
        evalwh.errors.ArgumentError: test 'ttest' is not one of t, sign
    """

    @classmethod
    def _missing_(cls, value: object) -> Choice:
        noun = getattr(cls, "__noun__", None) or re.sub(r"(?<!^)(?=[A-Z])", " ", cls.__name__).lower()
        raise ArgumentError(f"{noun} {value!r} is not one of {', '.join(m.value for m in cls)}")


def check_seed(seed: object, what: str = "seed") -> None:
    """Refuse a random seed numpy would refuse (a negative number, a fraction), naming it.

    None (fresh randomness each time) and a non-negative integer pass; so does a
    ``numpy.random.Generator``, used as it is.

    Examples:
        >>> check_seed(-1)
        Traceback (most recent call last):
        ...
        evalwh.errors.ArgumentError: seed -1: a seed is a whole number >= 0 (or None: fresh each time)
    """
    import numbers

    if seed is None or type(seed).__name__ == "Generator":
        return
    if isinstance(seed, bool) or not isinstance(seed, numbers.Integral) or int(seed) < 0:
        raise ArgumentError(f"{what} {seed!r}: a seed is a whole number >= 0 (or None: fresh each time)")



def check_count(value: object, what: str, *, minimum: int = 1) -> int:
    """A whole number >= ``minimum`` (a depth, a budget, a number of resamples), as an ``int``.

    The CLI's options are typed; the Python API's arguments are checked here the same way: a
    ``bool``, a fraction (``1.5``, ``5.5``), text (``'10'``) or ``nan`` is refused, naming the
    argument, rather than truncated, rounded or failing later with a bare ``TypeError``. A
    float holding a whole number (``10.0``) is that number.

    Examples:
        >>> check_count(10.0, "budget")
        10
        >>> check_count(1.5, "budget")
        Traceback (most recent call last):
        ...
        evalwh.errors.ArgumentError: budget 1.5: expected a whole number >= 1
    """
    import numbers

    ok = not isinstance(value, bool) and isinstance(value, numbers.Real)
    if ok and not isinstance(value, numbers.Integral):
        number = float(value)  # type: ignore[arg-type]
        ok = math.isfinite(number) and number.is_integer()
    if not ok or int(value) < minimum:  # type: ignore[call-overload]
        raise ArgumentError(f"{what} {value!r}: expected a whole number >= {minimum}")
    return int(value)  # type: ignore[call-overload]


def check_real(
    value: object, what: str, *, low: float = -math.inf, high: float = math.inf, low_open: bool = False,
    high_open: bool = False,
) -> float:  # fmt: skip
    """A finite real number in an interval (a level, a constant, a threshold), as a ``float``.

    ``bool``, text and ``nan`` are refused, naming the argument and the interval.

    Examples:
        >>> check_real(0.05, "alpha", low=0, high=1, low_open=True, high_open=True)
        0.05
        >>> check_real(1.5, "alpha", low=0, high=1, low_open=True, high_open=True)
        Traceback (most recent call last):
        ...
        evalwh.errors.ArgumentError: alpha 1.5: expected a number in (0, 1)
    """
    import numbers

    ok = not isinstance(value, bool) and isinstance(value, numbers.Real) and math.isfinite(float(value))  # type: ignore[arg-type]
    if ok:
        number = float(value)  # type: ignore[arg-type]
        ok = (number > low if low_open else number >= low) and (number < high if high_open else number <= high)
    if not ok:
        if math.isinf(low) and math.isinf(high):
            domain = "a finite number"
        elif math.isinf(high):
            domain = f"a number {'>' if low_open else '>='} {low:g}"
        elif math.isinf(low):
            domain = f"a number {'<' if high_open else '<='} {high:g}"
        else:
            domain = f"a number in {'(' if low_open else '['}{low:g}, {high:g}{')' if high_open else ']'}"
        raise ArgumentError(f"{what} {value!r}: expected {domain}")
    return float(value)  # type: ignore[arg-type]


def check_names(value: object, what: str) -> list[str]:
    """A list of names given as one string or an iterable of strings (never split into characters).

    Examples:
        >>> check_names("depth", "strategies"), check_names(("depth", "mtf"), "strategies")
        (['depth'], ['depth', 'mtf'])
    """
    if isinstance(value, str):
        return [value]
    try:
        names = list(value)  # type: ignore[call-overload]
    except TypeError:
        raise ArgumentError(f"{what} {value!r}: expected a name or a list of names") from None
    bad = next((n for n in names if not isinstance(n, str)), None)
    if bad is not None:
        raise ArgumentError(f"{what}: {bad!r} is not a name (a string)")
    return names
