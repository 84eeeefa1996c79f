"""Warehouse inventory tracking for a small online shop.

The module keeps stock levels per SKU and per warehouse, records every movement in an
append-only ledger, and suggests reorders when stock falls below a reorder point.
It is self-contained (standard library only) so it can be run as a script:

    python inventory.py

which loads a tiny demo catalogue, simulates a day of orders and prints a report.
"""

from __future__ import annotations

import csv
import functools
import io
import logging
import math
from collections import defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from enum import Enum

log = logging.getLogger(__name__)

# Days of demand we try to keep on hand after a delivery arrives.
TARGET_COVER_DAYS = 21
# Supplier lead time used when a product does not specify its own.
DEFAULT_LEAD_TIME_DAYS = 7
# z-score for a 95 % service level in the safety-stock formula.
SERVICE_LEVEL_Z = 1.65
WAREHOUSES = ("BRS", "MAN", "EDI")


class MovementKind(Enum):
    """Why stock moved in or out of a warehouse."""

    RECEIPT = "receipt"
    SALE = "sale"
    RETURN = "return"
    TRANSFER_IN = "transfer_in"
    TRANSFER_OUT = "transfer_out"
    ADJUSTMENT = "adjustment"

    @property
    def sign(self) -> int:
        """+1 when the movement adds stock, -1 when it removes it."""
        outgoing = {MovementKind.SALE, MovementKind.TRANSFER_OUT}
        return -1 if self in outgoing else 1


class InventoryError(Exception):
    """Raised when a movement would leave the ledger in an impossible state."""


@dataclass(frozen=True)
class Product:
    """A sellable item. Prices are in pence to avoid floating-point money."""

    sku: str
    name: str
    unit_price_pence: int
    lead_time_days: int = DEFAULT_LEAD_TIME_DAYS
    case_size: int = 1

    def __post_init__(self) -> None:
        if not self.sku or not self.sku.isupper():
            raise ValueError(f"SKU must be non-empty upper case, got {self.sku!r}")
        if self.case_size < 1:
            raise ValueError("case_size must be at least 1")


@dataclass(frozen=True)
class Movement:
    """One line of the stock ledger."""

    sku: str
    warehouse: str
    kind: MovementKind
    quantity: int
    at: datetime
    reference: str = ""

    @property
    def delta(self) -> int:
        """Signed change in stock caused by this movement."""
        return self.kind.sign * self.quantity


@dataclass
class Ledger:
    """Append-only record of movements with running stock levels."""

    products: dict[str, Product] = field(default_factory=dict)
    movements: list[Movement] = field(default_factory=list)
    _levels: dict[tuple[str, str], int] = field(
        default_factory=lambda: defaultdict(int), repr=False
    )

    def add_product(self, product: Product) -> None:
        """Register a product; registering the same SKU twice is an error."""
        if product.sku in self.products:
            raise InventoryError(f"duplicate SKU {product.sku}")
        self.products[product.sku] = product

    def record(self, movement: Movement) -> int:
        """Apply a movement and return the new stock level for that SKU/warehouse."""
        if movement.sku not in self.products:
            raise InventoryError(f"unknown SKU {movement.sku}")
        if movement.warehouse not in WAREHOUSES:
            raise InventoryError(f"unknown warehouse {movement.warehouse}")
        if movement.quantity <= 0:
            raise InventoryError("quantity must be positive; use the kind for direction")
        key = (movement.sku, movement.warehouse)
        new_level = self._levels[key] + movement.delta
        if new_level < 0:
            raise InventoryError(
                f"{movement.sku} at {movement.warehouse} would go negative ({new_level})"
            )
        self._levels[key] = new_level
        self.movements.append(movement)
        log.debug("recorded %s -> level %d", movement, new_level)
        return new_level

    def level(self, sku: str, warehouse: str | None = None) -> int:
        """Stock on hand for one warehouse, or across all warehouses."""
        if warehouse is not None:
            return self._levels[(sku, warehouse)]
        return sum(self._levels[(sku, wh)] for wh in WAREHOUSES)

    def transfer(self, sku: str, source: str, target: str, quantity: int) -> None:
        """Move stock between warehouses as a matched pair of movements."""
        now = datetime.now()
        reference = f"TR-{sku}-{now:%Y%m%d%H%M%S}"
        self.record(Movement(sku, source, MovementKind.TRANSFER_OUT, quantity, now, reference))
        self.record(Movement(sku, target, MovementKind.TRANSFER_IN, quantity, now, reference))

    def history(self, sku: str) -> Iterator[Movement]:
        """Movements for one SKU, oldest first."""
        return (m for m in self.movements if m.sku == sku)


# Demand statistics are recomputed often by the report but change rarely, so they are
# cached per (sales, days) pair; call daily_demand.cache_clear() to free memory.
@functools.lru_cache(maxsize=1024)
def daily_demand(sales: tuple[int, ...], days: int) -> tuple[float, float]:
    """Mean and standard deviation of units sold per day over ``days`` days."""
    if days <= 0:
        raise ValueError("days must be positive")
    padded = list(sales) + [0] * (days - len(sales))
    mean = sum(padded) / days
    variance = sum((x - mean) ** 2 for x in padded) / days
    return mean, math.sqrt(variance)


def sales_by_day(ledger: Ledger, sku: str, end: date, days: int) -> tuple[int, ...]:
    """Units sold per calendar day for the ``days`` days ending on ``end``."""
    start = end - timedelta(days=days - 1)
    totals: dict[date, int] = defaultdict(int)
    for movement in ledger.history(sku):
        day = movement.at.date()
        if movement.kind is MovementKind.SALE and start <= day <= end:
            totals[day] += movement.quantity
        elif movement.kind is MovementKind.RETURN and start <= day <= end:
            totals[day] -= movement.quantity
    return tuple(max(totals[start + timedelta(days=i)], 0) for i in range(days))


def reorder_point(mean: float, std: float, lead_time_days: int) -> int:
    """Stock level at which to reorder: lead-time demand plus safety stock."""
    safety_stock = SERVICE_LEVEL_Z * std * math.sqrt(lead_time_days)
    return math.ceil(mean * lead_time_days + safety_stock)


def round_up_to_case(quantity: int, case_size: int) -> int:
    """Suppliers ship whole cases only."""
    return -(-quantity // case_size) * case_size


@dataclass(frozen=True)
class ReorderSuggestion:
    """What to order, and why."""

    sku: str
    on_hand: int
    reorder_at: int
    order_quantity: int

    @property
    def urgent(self) -> bool:
        """Urgent when stock is already below half of the reorder point."""
        return self.on_hand < self.reorder_at / 2


def suggest_reorders(ledger: Ledger, today: date, window_days: int = 28) -> list[ReorderSuggestion]:
    """Reorder suggestions for every product whose stock is at or below its reorder point."""
    suggestions = []
    for sku, product in sorted(ledger.products.items()):
        mean, std = daily_demand(sales_by_day(ledger, sku, today, window_days), window_days)
        reorder_at = reorder_point(mean, std, product.lead_time_days)
        on_hand = ledger.level(sku)
        if on_hand > reorder_at:
            continue
        wanted = math.ceil(mean * (TARGET_COVER_DAYS + product.lead_time_days)) - on_hand
        quantity = round_up_to_case(max(wanted, 1), product.case_size)
        suggestions.append(ReorderSuggestion(sku, on_hand, reorder_at, quantity))
    return suggestions


def stock_value_pence(ledger: Ledger) -> int:
    """Total value of stock on hand at list price."""
    return sum(
        ledger.level(sku) * product.unit_price_pence for sku, product in ledger.products.items()
    )


def export_levels_csv(ledger: Ledger) -> str:
    """Stock levels as CSV text: one row per SKU, one column per warehouse."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(["sku", "name", *WAREHOUSES, "total"])
    for sku, product in sorted(ledger.products.items()):
        per_warehouse = [ledger.level(sku, wh) for wh in WAREHOUSES]
        writer.writerow([sku, product.name, *per_warehouse, sum(per_warehouse)])
    return buffer.getvalue()


def load_products(rows: Iterable[dict[str, str]]) -> list[Product]:
    """Build products from CSV-like rows, skipping (and logging) malformed ones."""
    products = []
    for line_number, row in enumerate(rows, start=2):
        try:
            products.append(
                Product(
                    sku=row["sku"].strip(),
                    name=row["name"].strip(),
                    unit_price_pence=int(row["price_pence"]),
                    lead_time_days=int(row.get("lead_time_days") or DEFAULT_LEAD_TIME_DAYS),
                    case_size=int(row.get("case_size") or 1),
                )
            )
        except (KeyError, ValueError) as exc:
            log.warning("skipping product row %d: %s", line_number, exc)
    return products


def format_pence(amount: int) -> str:
    """1234567 -> '£12,345.67'."""
    pounds, pence = divmod(amount, 100)
    return f"£{pounds:,}.{pence:02d}"


DEMO_CATALOGUE = """sku,name,price_pence,lead_time_days,case_size
MUG-BLU,Blue enamel mug,1250,5,6
MUG-RED,Red enamel mug,1250,5,6
TEA-EARL,Earl Grey loose tea 250g,899,10,12
KET-STL,Stovetop kettle,3999,14,1
BAD-ROW,Broken row without price,,3,1
"""


def _demo(today: date) -> Ledger:
    """A ledger with a month of plausible history."""
    ledger = Ledger()
    for product in load_products(csv.DictReader(io.StringIO(DEMO_CATALOGUE))):
        ledger.add_product(product)
    start = datetime.combine(today - timedelta(days=27), datetime.min.time())
    for sku, opening in (("MUG-BLU", 120), ("MUG-RED", 32), ("TEA-EARL", 300), ("KET-STL", 6)):
        ledger.record(Movement(sku, "BRS", MovementKind.RECEIPT, opening, start, "OPENING"))
    # Deterministic "random" sales so the demo output is stable.
    for day in range(28):
        moment = start + timedelta(days=day, hours=11)
        ledger.record(Movement("MUG-BLU", "BRS", MovementKind.SALE, 2 + day % 3, moment))
        ledger.record(Movement("MUG-RED", "BRS", MovementKind.SALE, 1, moment))
        ledger.record(Movement("TEA-EARL", "BRS", MovementKind.SALE, 4 + day % 5, moment))
        if day % 9 == 0:
            ledger.record(Movement("KET-STL", "BRS", MovementKind.SALE, 1, moment))
    ledger.transfer("TEA-EARL", "BRS", "EDI", 30)
    return ledger


if __name__ == "__main__":
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(message)s")
    today = date.today()
    ledger = _demo(today)
    print(export_levels_csv(ledger))
    print("Stock value:", format_pence(stock_value_pence(ledger)))
    for suggestion in suggest_reorders(ledger, today):
        flag = "URGENT " if suggestion.urgent else ""
        print(
            f"{flag}reorder {suggestion.order_quantity} x {suggestion.sku} "
            f"(on hand {suggestion.on_hand}, reorder point {suggestion.reorder_at})"
        )
