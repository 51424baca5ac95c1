import unittest

from inventory.models import Inventory, Item


class InventoryTest(unittest.TestCase):
    def test_add_merges_quantities(self):
        inv = Inventory([Item("a", 1.0, 2)])
        inv.add(Item("a", 1.0, 3))
        self.assertEqual(inv.find("a").quantity, 5)

    def test_remove_more_than_stock_fails(self):
        inv = Inventory([Item("a", 1.0, 2)])
        with self.assertRaises(ValueError):
            inv.remove("a", 3)

    def test_find_missing(self):
        with self.assertRaises(KeyError):
            Inventory().find("nothing")

    def test_items_sorted(self):
        inv = Inventory([Item("b", 1.0, 1), Item("a", 1.0, 1)])
        self.assertEqual([i.name for i in inv.items()], ["a", "b"])


if __name__ == "__main__":
    unittest.main()
