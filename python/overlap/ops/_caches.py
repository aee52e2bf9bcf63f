"""What the ops keep between calls: weights transposed / packed for the kernels (packed once per
weight, as a model would at load time) and the linrnn workspaces that must stay with a stream.

A cached weight is keyed by its storage address, shape, stride and dtype, and the entry holds a
reference to the weight: while the entry lives, that address cannot be reused by another tensor,
so a hit is always the same weight; an in-place update (optimizer step, load_state_dict) bumps the
tensor's version and repacks. Both caches keep the most recent entries only
(MAX_ENTRIES); overlap.ops.clear_caches() empties them."""
from collections import OrderedDict

MAX_ENTRIES = 16


class LruCache:
    def __init__(self, max_entries=MAX_ENTRIES):
        self.max_entries = max_entries
        self.entries = OrderedDict()

    def get(self, key):
        if key in self.entries:
            self.entries.move_to_end(key)
            return self.entries[key]
        return None

    def put(self, key, value):
        self.entries[key] = value
        self.entries.move_to_end(key)
        while len(self.entries) > self.max_entries:
            self.entries.popitem(last=False)
        return value

    def clear(self):
        self.entries.clear()


def tensor_key(t):
    return (t.data_ptr(), tuple(t.shape), t.stride(), t.dtype, t.device)


def version(t):
    # Tensors made under torch.inference_mode() keep no version counter: for them the address
    # alone is the key, and an in-place update is not seen (call overlap.ops.clear_caches()).
    try:
        return t._version
    except RuntimeError:
        return None


class WeightCache:
    """derived = make() for a tuple of weights, remade when any of them changed in place."""

    def __init__(self):
        self.lru = LruCache()

    def get(self, tag, weights, make):
        key = (tag,) + tuple(tensor_key(w) for w in weights)
        versions = tuple(version(w) for w in weights)
        hit = self.lru.get(key)
        if hit is not None and hit[1] == versions:
            return hit[2]
        return self.lru.put(key, (tuple(weights), versions, make()))[2]

    def clear(self):
        self.lru.clear()


weights = WeightCache()
workspaces = LruCache()


def clear_caches():
    """Drops every packed weight and workspace the ops hold."""
    weights.clear()
    workspaces.clear()
