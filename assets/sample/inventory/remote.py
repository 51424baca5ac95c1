"""Optional: refresh prices from a price service."""


def fetch_prices(url, timeout=5):
    """Return {name: price} from a JSON price list at url."""
    import requests  # optional dependency, see requirements.txt

    response = requests.get(url, timeout=timeout)
    response.raise_for_status()
    return {row["name"]: float(row["price"]) for row in response.json()}
