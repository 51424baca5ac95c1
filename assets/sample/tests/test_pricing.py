import os
import unittest

from inventory import pricing
from inventory.models import Item


class BulkDiscountTest(unittest.TestCase):
    def test_small_orders_pay_full_price(self):
        self.assertEqual(pricing.bulk_discount(10), 0)

    def test_fifty_units_earn_five_percent(self):
        self.assertEqual(pricing.bulk_discount(50), 5)

    def test_one_hundred_units_earn_ten_percent(self):
        # "100 units or more earn 10 %"
        self.assertEqual(pricing.bulk_discount(100), 10)


class TaxTest(unittest.TestCase):
    def setUp(self):
        self._saved = os.environ.get("TAX_RATE")

    def tearDown(self):
        if self._saved is None:
            os.environ.pop("TAX_RATE", None)
        else:
            os.environ["TAX_RATE"] = self._saved

    def test_tax_rate_from_environment(self):
        os.environ["TAX_RATE"] = "0.1"
        self.assertAlmostEqual(pricing.price_with_tax(100), 110)

    def test_line_total(self):
        os.environ["TAX_RATE"] = "0.2"
        item = Item("widget", 2.5, 120)
        self.assertAlmostEqual(pricing.line_total(item), 324.0)


if __name__ == "__main__":
    unittest.main()
