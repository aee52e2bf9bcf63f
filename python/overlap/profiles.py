"""Hardware profiles: the built-in ones (T4, A100, H100, H200, B200) and profile files, as the C++
model reads them (base resolved, every field with its unit-suffixed name and its source)."""
import json
import os
import tempfile

from . import _core


class Profile:
    """One GPU's numbers. `fields` maps a field name (e.g. "hbm_bandwidth_GBps") to its value,
    `sources` to where the number comes from. Pass a Profile as `hw=` anywhere a name works;
    `derive` makes a modified copy (an unknown field is an OverlapError from the C++ parser)."""

    def __init__(self, data, origin):
        self._data = data
        self.origin = origin  # a built-in name or a file path; None for a derived profile
        self.name = data["name"]
        self.description = data.get("description", "")
        self.fields = {k: v["value"] for k, v in data["fields"].items()}
        self.sources = {k: v.get("source", "") for k, v in data["fields"].items()}

    def to_dict(self):
        """The profile file's JSON (the format of profiles/*.json)."""
        return json.loads(json.dumps(self._data))

    def derive(self, name, description=None, **overrides):
        """A copy named `name` with some fields replaced, e.g. derive("H100-slow-hbm",
        hbm_bandwidth_GBps=2000). The new numbers' source says they were set from Python."""
        data = self.to_dict()
        data["name"] = name
        data["description"] = description or f"{self.name} with {', '.join(overrides)} changed from Python"
        for key, value in overrides.items():
            data["fields"][key] = {"value": value, "source": "set from Python (Profile.derive)"}
        # The C++ parser checks every field, as it checks a profile file.
        checked = _core.parse_profile_json(json.dumps(data), f"{self.name}.derive('{name}')")
        return Profile(json.loads(checked), None)

    def save(self, path):
        with open(path, "w") as f:
            json.dump(self._data, f, indent=2)
            f.write("\n")

    def __repr__(self):
        f = self.fields
        return (f"Profile({self.name}: {f['sm_count']:.0f} SMs at {f['clock_MHz']:.0f} MHz, "
                f"HBM {f['hbm_bandwidth_GBps']:.0f} GB/s, bf16 tensor {f['tensor_bf16_TFLOPs']:.0f} TFLOP/s)")


class _TempProfile:
    """A profile written to a temporary file for the C++ loader; removed when collected."""

    def __init__(self, data):
        fd, self.path = tempfile.mkstemp(prefix="overlap-profile-", suffix=".json")
        with os.fdopen(fd, "w") as f:
            json.dump(data, f)

    def __del__(self):
        try:
            os.unlink(self.path)
        except OSError:
            pass


def profiles():
    """The built-in profiles by name: {"T4": Profile, ..., "B200": Profile}."""
    return {name: load_profile(name) for name in _core.builtin_profile_names()}


def load_profile(name_or_path):
    """A built-in profile name or a profile JSON file (which may derive from a built-in one)."""
    return Profile(json.loads(_core.profile_json(os.fspath(name_or_path))), os.fspath(name_or_path))


class HwArgument:
    """`hw=` as the C++ takes it: a name, a file path, "all" or a comma list, from a string, a
    Profile or a list of either (`single`: one profile only). Profiles made in Python are
    written to temporary files that live as long as this object."""

    def __init__(self, hw, single=False):
        self._temps = []
        if single and (isinstance(hw, (list, tuple)) or (isinstance(hw, str) and ("," in hw or hw == "all"))):
            raise TypeError(f"hw={hw!r}: predict, compare and trace take one profile; overlap.sweep takes several")
        items = hw if isinstance(hw, (list, tuple)) else [hw]
        self.names = [self._one(h) for h in items]
        self.text = ",".join(self.names)

    def _one(self, hw):
        if isinstance(hw, Profile):
            if hw.origin is not None:
                return hw.origin
            temp = _TempProfile(hw.to_dict())
            self._temps.append(temp)
            return temp.path
        if isinstance(hw, os.PathLike):
            return os.fspath(hw)
        if isinstance(hw, str):
            return hw
        raise TypeError(f"hw={hw!r}: expected a profile name, a profile file, a Profile or a list of them")
