"""Command line: python3 -m inventory.cli list|report|add NAME PRICE QTY."""

import argparse
import sys

from .models import Item
from .report import format_report
from .storage import JsonStore


def main(argv=None):
    parser = argparse.ArgumentParser(prog="inventory")
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("list")
    sub.add_parser("report")
    add = sub.add_parser("add")
    add.add_argument("name")
    add.add_argument("price", type=float)
    add.add_argument("quantity", type=int)
    args = parser.parse_args(argv)

    store = JsonStore()
    inventory = store.load()
    if args.command == "list":
        for item in inventory.items():
            print(f"{item.name}\t{item.quantity}")
    elif args.command == "report":
        print(format_report(inventory))
    elif args.command == "add":
        inventory.add(Item(args.name, args.price, args.quantity))
        store.save(inventory)
    return 0


if __name__ == "__main__":
    sys.exit(main())
