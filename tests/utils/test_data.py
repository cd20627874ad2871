"""jitgrad.utils.data against torch.utils.data 2.13 (expected values pinned from it)."""
import collections
import threading
import time

import numpy as np
import pytest

import jitgrad as jg
from jitgrad.utils.data import (BatchSampler, ChainDataset, ConcatDataset, DataLoader, Dataset,
                                IterableDataset, RandomSampler, Sampler, SequentialSampler,
                                StackDataset, Subset, SubsetRandomSampler, TensorDataset,
                                WeightedRandomSampler, default_collate, default_convert,
                                get_worker_info, random_split)


class Stream(IterableDataset):
    def __init__(self, n):
        self.n = n

    def __iter__(self):
        info = get_worker_info()
        if info is None:
            return iter(range(self.n))
        return iter(range(info.id, self.n, info.num_workers))

    def __len__(self):
        return self.n


class Squares(Dataset):
    def __init__(self, n):
        self.n = n

    def __getitem__(self, i):
        return {"x": np.array([i, i * i], dtype=np.float64), "label": i % 2, "name": f"s{i}"}

    def __len__(self):
        return self.n


def _data(n=10):
    x = jg.tensor(np.arange(2.0 * n).reshape(n, 2))
    y = jg.tensor(np.arange(n))
    return x, y


# --- collate ---------------------------------------------------------------------------------
def test_default_collate_types_as_torch():
    # torch 2.13: dc([True, False]) -> bool tensor, dc([1, 2]) -> int64, dc([1.5, 2]) -> float64
    b = default_collate([True, False])
    assert b.dtype == jg.bool and b.tolist() == [True, False]
    b = default_collate([1, 2])
    assert b.dtype == jg.int64 and b.tolist() == [1, 2]
    b = default_collate([1.5, 2.0])
    assert b.dtype == jg.float64 and b.tolist() == [1.5, 2.0]
    assert default_collate(["a", "b"]) == ["a", "b"]
    assert default_collate([b"a", b"b"]) == [b"a", b"b"]
    b = default_collate([np.float32(1), np.float32(2)])
    assert b.dtype == jg.float32 and b.tolist() == [1.0, 2.0]
    b = default_collate([np.int64(3), np.int64(4)])
    assert b.dtype == jg.int64
    b = default_collate([np.array([1, 2]), np.array([3, 4])])
    assert b.shape == (2, 2) and b.tolist() == [[1, 2], [3, 4]]
    b = default_collate([np.array(3.0), np.array(4.0)])
    assert b.shape == (2,) and b.dtype == jg.float64


def test_default_collate_containers_as_torch():
    pair = default_collate([(1, 2.0), (3, 4.0)])  # torch returns a list for tuples
    assert isinstance(pair, list) and pair[0].tolist() == [1, 3] and pair[1].tolist() == [2., 4.]
    lists = default_collate([[1, 2], [3, 4]])
    assert isinstance(lists, list) and [t.tolist() for t in lists] == [[1, 3], [2, 4]]
    d = default_collate([{"a": 1, "b": [1.0, 2.0]}, {"a": 2, "b": [3.0, 4.0]}])
    assert d["a"].tolist() == [1, 2] and [t.tolist() for t in d["b"]] == [[1.0, 3.0], [2.0, 4.0]]
    od = default_collate([collections.OrderedDict(a=1), collections.OrderedDict(a=2)])
    assert type(od) is collections.OrderedDict
    P = collections.namedtuple("P", "x y")
    p = default_collate([P(1, 2.0), P(3, 4.0)])
    assert type(p) is P and p.x.tolist() == [1, 3] and p.y.dtype == jg.float64


def test_default_collate_errors_as_torch():
    with pytest.raises(TypeError, match="found <class 'object'>"):
        default_collate([object()])
    with pytest.raises(TypeError, match="found <U1"):
        default_collate([np.array(["a"])])
    with pytest.raises(RuntimeError, match="each element in list of batch should be of equal"):
        default_collate([[1, 2], [3]])
    with pytest.raises(RuntimeError, match=r"equal size, but got \[2\] at entry 0 and \[3\] at "
                                           r"entry 1"):
        default_collate([jg.ones(2), jg.ones(3)])


def test_default_convert_as_torch():
    out = default_convert((1, np.array([1.0])))  # torch: [1, tensor([1.])]
    assert isinstance(out, list) and out[0] == 1 and isinstance(out[1], jg.Tensor)
    s = default_convert(np.float64(2))
    assert isinstance(s, jg.Tensor) and s.shape == () and s.item() == 2.0
    assert default_convert("s") == "s" and default_convert(3) == 3
    d = default_convert({"a": np.arange(3)})
    assert d["a"].tolist() == [0, 1, 2]


def test_collate_keeps_grad_only_when_data_has_it():
    a = jg.ones(3, requires_grad=True)
    b = jg.ones(3, requires_grad=True)
    batch = default_collate([a * 2, b * 3])
    assert batch.requires_grad
    batch.sum().backward()
    np.testing.assert_array_equal(a.grad.numpy(), [2.0, 2.0, 2.0])
    assert not default_collate([jg.ones(3), jg.ones(3)]).requires_grad


# --- datasets --------------------------------------------------------------------------------
def test_tensor_dataset():
    x, y = _data()
    ds = TensorDataset(x, y)
    assert len(ds) == 10
    xi, yi = ds[3]
    assert xi.tolist() == [6.0, 7.0] and yi.item() == 3
    with pytest.raises(ValueError, match="size mismatch"):
        TensorDataset(jg.ones(3), jg.ones(4))


def test_stack_concat_subset_chain_as_torch():
    s = StackDataset(range(3), "abc")
    assert s[1] == (1, "b") and len(s) == 3
    assert StackDataset(a=range(3), b="abc")[2] == {"a": 2, "b": "c"}
    with pytest.raises(ValueError, match="both types"):
        StackDataset(range(3), b="abc")
    with pytest.raises(ValueError, match="size mismatch"):
        StackDataset(range(3), "ab")
    c = ConcatDataset([range(3), range(5)])
    assert c.cumulative_sizes == [3, 8] and c[-1] == 4 and c[3] == 0 and len(c) == 8
    assert [c[i] for i in range(8)] == [0, 1, 2, 0, 1, 2, 3, 4]
    with pytest.raises(ValueError, match="should not exceed dataset length"):
        c[-9]
    with pytest.raises(ValueError, match="IterableDataset"):
        ConcatDataset([Stream(2)])
    sq = Squares(3) + Squares(2)
    assert isinstance(sq, ConcatDataset) and sq[4]["label"] == 1
    sub = Subset(list(range(10)), [5, 3, 1])
    assert sub[1] == 3 and len(sub) == 3
    x, y = _data()
    batch = Subset(TensorDataset(x, y), [5, 3, 1])[[0, 2]]  # passed on as one list index
    assert batch[1].tolist() == [5, 1]
    chained = Stream(2) + Stream(3)
    assert isinstance(chained, ChainDataset) and list(chained) == [0, 1, 0, 1, 2]
    assert len(ChainDataset([Stream(2), Stream(3)])) == 5


def test_random_split_lengths_as_torch():
    # torch 2.13: fractions floor, the remainder round-robin from the first split
    assert [len(s) for s in random_split(range(10), [0.33, 0.33, 0.34])] == [4, 3, 3]
    assert [len(s) for s in random_split(range(7), [0.5, 0.5])] == [4, 3]
    assert [len(s) for s in random_split(range(11), [0.1, 0.2, 0.7])] == [2, 2, 7]
    with pytest.warns(UserWarning, match="Length of split at index 1 is 0"):
        assert [len(s) for s in random_split(range(2), [0.1, 0.1, 0.8])] == [1, 0, 1]
    with pytest.raises(ValueError, match="Sum of input lengths does not equal"):
        random_split(range(5), [2, 2])
    parts = random_split(range(10), [3, 7], generator=np.random.default_rng(0))
    assert sorted(parts[0].indices + parts[1].indices) == list(range(10))
    again = random_split(range(10), [3, 7], generator=np.random.default_rng(0))
    assert parts[0].indices == again[0].indices
    jg.manual_seed(5)
    a = random_split(range(20), [0.5, 0.5])[0].indices
    jg.manual_seed(5)
    assert random_split(range(20), [0.5, 0.5])[0].indices == a


# --- samplers --------------------------------------------------------------------------------
def test_sequential_and_batch_sampler_as_torch():
    assert list(SequentialSampler(range(4))) == [0, 1, 2, 3]
    assert list(BatchSampler(range(10), 3, False)) == [[0, 1, 2], [3, 4, 5], [6, 7, 8], [9]]
    assert list(BatchSampler(range(10), 3, True)) == [[0, 1, 2], [3, 4, 5], [6, 7, 8]]
    assert len(BatchSampler(range(10), 3, False)) == 4
    assert len(BatchSampler(range(10), 3, True)) == 3
    with pytest.raises(ValueError, match="batch_size should be a positive integer"):
        BatchSampler(range(3), 0, False)
    assert isinstance(SequentialSampler(range(2)), Sampler)


def test_random_sampler():
    rng = np.random.default_rng(1)
    order = list(RandomSampler(range(10), generator=rng))
    assert sorted(order) == list(range(10)) and order != list(range(10))
    long = list(RandomSampler(range(4), num_samples=10, generator=rng))
    assert len(long) == 10 and sorted(long[:4]) == [0, 1, 2, 3] and sorted(long[4:8]) == [0, 1, 2, 3]
    assert len(set(long[8:])) == 2
    drawn = list(RandomSampler(range(3), replacement=True, num_samples=200, generator=rng))
    assert len(drawn) == 200 and set(drawn) == {0, 1, 2}
    with pytest.raises(ValueError, match="num_samples should be a positive integer value, but "
                                         "got num_samples=0"):
        RandomSampler(range(3), num_samples=0)
    with pytest.raises(TypeError, match="replacement should be a boolean"):
        RandomSampler(range(3), replacement=1)
    jg.manual_seed(3)
    first = list(RandomSampler(range(50)))
    jg.manual_seed(3)
    assert list(RandomSampler(range(50))) == first
    with pytest.raises(TypeError, match="generator"):
        list(RandomSampler(range(3), generator=object()))


@pytest.mark.skipif(not hasattr(jg, "Generator"), reason="jitgrad.Generator not there yet")
def test_jitgrad_generator_gives_a_reproducible_order():
    x, y = _data(12)
    loader = DataLoader(TensorDataset(x, y), batch_size=5, shuffle=True,
                        generator=jg.Generator().manual_seed(11))
    first = [b[1].tolist() for b in loader]
    loader.generator.manual_seed(11)
    assert [b[1].tolist() for b in loader] == first
    assert [b[1].tolist() for b in loader] != first  # the next epoch draws on
    assert sorted(sum(first, [])) == list(range(12))
    split = random_split(range(8), [0.5, 0.5], generator=jg.Generator().manual_seed(2))
    again = random_split(range(8), [0.5, 0.5], generator=jg.Generator().manual_seed(2))
    assert split[0].indices == again[0].indices


def test_subset_and_weighted_samplers():
    rng = np.random.default_rng(2)
    got = list(SubsetRandomSampler([10, 20, 30], generator=rng))
    assert sorted(got) == [10, 20, 30]
    assert list(WeightedRandomSampler([0, 0, 1.0, 0], 3)) == [2, 2, 2]  # as torch
    counts = np.bincount(list(WeightedRandomSampler(jg.tensor([1.0, 3.0]), 4000,
                                                    generator=rng)), minlength=2)
    assert abs(counts[1] / 4000 - 0.75) < 0.03
    no_rep = list(WeightedRandomSampler([1.0, 2.0, 3.0, 4.0], 4, replacement=False,
                                        generator=rng))
    assert sorted(no_rep) == [0, 1, 2, 3]
    assert WeightedRandomSampler([1, 2], 3).weights.dtype == jg.float64
    with pytest.raises(ValueError, match="non-negative"):
        WeightedRandomSampler([1.0, -1.0], 2)
    with pytest.raises(ValueError, match="1d sequence"):
        WeightedRandomSampler([[1.0]], 1)


# --- DataLoader ------------------------------------------------------------------------------
def test_loader_tensor_dataset_batches():
    x, y = _data()
    dl = DataLoader(TensorDataset(x, y), batch_size=4)
    batches = list(dl)
    assert len(dl) == 3 and len(batches) == 3
    assert isinstance(batches[0], list)
    np.testing.assert_array_equal(batches[0][0].numpy(), np.arange(8.0).reshape(4, 2))
    assert batches[2][1].tolist() == [8, 9]
    assert not batches[0][0].requires_grad
    assert len(DataLoader(TensorDataset(x, y), batch_size=4, drop_last=True)) == 2


def test_loader_shuffle_is_reproducible_and_differentiable():
    x, y = _data()
    dl = DataLoader(TensorDataset(x, y), batch_size=3, shuffle=True)
    jg.manual_seed(0)
    first = [b[1].tolist() for b in dl]
    jg.manual_seed(0)
    assert [b[1].tolist() for b in dl] == first
    assert sorted(sum(first, [])) == list(range(10))
    seeded = DataLoader(TensorDataset(x, y), batch_size=3, shuffle=True,
                        generator=np.random.default_rng(7))
    for xb, yb in seeded:  # rows stay paired
        np.testing.assert_array_equal(xb.numpy()[:, 0], 2.0 * yb.numpy())
    w = jg.ones(10, 1, requires_grad=True)
    (xb, yb), = list(DataLoader(TensorDataset(w * 2.0, y), batch_size=10))
    assert xb.requires_grad
    xb.sum().backward()
    np.testing.assert_array_equal(w.grad.numpy(), np.full((10, 1), 2.0))


def test_loader_collates_dicts_and_numpy():
    batch = next(iter(DataLoader(Squares(5), batch_size=2)))
    np.testing.assert_array_equal(batch["x"].numpy(), [[0.0, 0.0], [1.0, 1.0]])
    assert batch["label"].tolist() == [0, 1] and batch["name"] == ["s0", "s1"]
    unbatched = list(DataLoader(range(5), batch_size=None))
    assert unbatched == [0, 1, 2, 3, 4]
    converted = list(DataLoader(Squares(2), batch_size=None))
    assert isinstance(converted[1]["x"], jg.Tensor) and converted[1]["x"].shape == (2,)
    custom = list(DataLoader(range(5), batch_size=2, collate_fn=lambda b: sum(b)))
    assert custom == [1, 5, 4]
    sampled = list(DataLoader(range(10), batch_size=2, sampler=[9, 8, 7]))
    assert [b.tolist() for b in sampled] == [[9, 8], [7]]
    by_batches = list(DataLoader(range(10), batch_sampler=[[1, 2, 3], [0]]))
    assert [b.tolist() for b in by_batches] == [[1, 2, 3], [0]]


def test_loader_over_arrays_and_tensors():
    batches = list(DataLoader(np.arange(12.0).reshape(6, 2), batch_size=4))
    assert isinstance(batches[0], jg.Tensor) and batches[0].shape == (4, 2)
    np.testing.assert_array_equal(batches[1].numpy(), [[8.0, 9.0], [10.0, 11.0]])
    rows = list(DataLoader(jg.arange(6.0), batch_size=4, drop_last=True))
    assert len(rows) == 1 and rows[0].tolist() == [0.0, 1.0, 2.0, 3.0]


def test_loader_iterable_dataset_as_torch():
    dl = DataLoader(Stream(7), batch_size=3)
    assert [b.tolist() for b in dl] == [[0, 1, 2], [3, 4, 5], [6]] and len(dl) == 3
    dl = DataLoader(Stream(7), batch_size=3, drop_last=True)
    assert [b.tolist() for b in dl] == [[0, 1, 2], [3, 4, 5]] and len(dl) == 2
    assert [b.tolist() for b in DataLoader(Stream(3), shuffle=False)] == [[0], [1], [2]]


@pytest.mark.parametrize("kwargs, message", [
    (dict(sampler=[1], shuffle=True), "sampler option is mutually exclusive with shuffle"),
    (dict(batch_sampler=[[1]], batch_size=2), "batch_sampler option is mutually exclusive"),
    (dict(batch_size=None, drop_last=True), "mutually exclusive with drop_last"),
    (dict(num_workers=-1), "num_workers option should be non-negative"),
    (dict(prefetch_factor=2), "prefetch_factor option could only be specified"),
    (dict(persistent_workers=True), "persistent_workers option needs num_workers > 0"),
])
def test_loader_argument_errors_as_torch(kwargs, message):
    with pytest.raises(ValueError, match=message):
        DataLoader(range(4), **kwargs)


def test_loader_iterable_rejects_shuffle():
    with pytest.raises(ValueError, match="expected unspecified shuffle option"):
        DataLoader(Stream(3), shuffle=True)


def test_loader_worker_threads_keep_order():
    x, y = _data(23)
    plain = [b[1].tolist() for b in DataLoader(TensorDataset(x, y), batch_size=4)]
    threaded = DataLoader(TensorDataset(x, y), batch_size=4, num_workers=3)
    assert [b[1].tolist() for b in threaded] == plain
    seen = []
    lock = threading.Lock()

    def init(worker_id):
        with lock:
            seen.append((worker_id, get_worker_info().num_workers))
    got = list(DataLoader(Squares(9), batch_size=2, num_workers=2, worker_init_fn=init))
    assert [b["label"].tolist() for b in got] == [[0, 1], [0, 1], [0, 1], [0, 1], [0]]
    assert sorted(seen) == [(0, 2), (1, 2)]
    assert get_worker_info() is None
    stream = DataLoader(Stream(10), batch_size=2, num_workers=2)  # split by get_worker_info
    assert sorted(sum((b.tolist() for b in stream), [])) == list(range(10))


def test_loader_worker_error_reaches_the_caller():
    class Bad(Dataset):
        def __getitem__(self, i):
            if i == 5:
                raise KeyError("no sample 5")
            return i

        def __len__(self):
            return 8

    with pytest.raises(KeyError, match="no sample 5"):
        list(DataLoader(Bad(), batch_size=2, num_workers=2))
    it = iter(DataLoader(Bad(), batch_size=1, num_workers=2))
    assert next(it).tolist() == [0]
    it.close()  # an abandoned iteration stops its threads
    deadline = time.monotonic() + 10
    while _loader_threads() and time.monotonic() < deadline:
        time.sleep(0.01)
    assert not _loader_threads()


def _loader_threads():
    return [t for t in threading.enumerate() if t.name.startswith("DataLoader worker")]


def test_loader_batching_is_one_gather_per_tensor(monkeypatch):
    import jitgrad.utils.data.collate as collate
    x, y = _data(64)
    calls = []
    monkeypatch.setattr(collate.shape, "stack", lambda *a, **k: calls.append(1))
    batches = list(DataLoader(TensorDataset(x, y), batch_size=16))
    assert len(batches) == 4 and not calls
    np.testing.assert_array_equal(batches[3][0].numpy(), x.numpy()[48:])
    list(DataLoader(list(zip(x, y)), batch_size=16))  # samples of a list are stacked
    assert calls
