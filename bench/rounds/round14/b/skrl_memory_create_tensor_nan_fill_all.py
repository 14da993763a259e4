# label: hazard silent
# why: create_tensor re-fills every float tensor already in storage with NaN in place, so the observations collected before a new field was added are destroyed
# source: https://github.com/Toni-SM/skrl/issues/456
import torch

torch.manual_seed(0)


class Memory:
    def __init__(self, memory_size, num_envs=1, device="cpu"):
        self.memory_size = memory_size
        self.num_envs = num_envs
        self.device = device
        self.memory_index = 0
        self.filled = False
        self.tensors = {}
        self.tensors_view = {}

    def create_tensor(self, name, size, dtype=None):
        if name in self.tensors:
            return False
        tensor_shape = (self.memory_size, self.num_envs, size)
        setattr(self, f"_tensor_{name}", torch.zeros(tensor_shape, device=self.device, dtype=dtype))
        self.tensors[name] = getattr(self, f"_tensor_{name}")
        self.tensors_view[name] = self.tensors[name].view(-1, size)
        # fill the tensors (float tensors) with NaN
        for tensor in self.tensors.values():
            if torch.is_floating_point(tensor):
                tensor.fill_(float("nan"))  # <-- IPL002: also wipes tensors that already hold collected samples
        return True

    def add_samples(self, **tensors):
        for name, tensor in tensors.items():
            if name in self.tensors:
                self.tensors[name][self.memory_index].copy_(tensor)
        self.memory_index += 1
        if self.memory_index >= self.memory_size:
            self.memory_index = 0
            self.filled = True

    def get_tensor_by_name(self, name):
        return self.tensors[name]


class RandomMemory(Memory):
    def sample(self, names, batch_size):
        indexes = torch.randint(0, self.memory_index, (batch_size,))
        return [[self.tensors_view[name][indexes] for name in names]]


m = RandomMemory(memory_size=4)
m.create_tensor("observations", size=2)
for _ in range(3):
    m.add_samples(observations=torch.randn(1, 2))
m.create_tensor("rewards", size=1)

observations, = m.sample(["observations"], batch_size=3)[0]
value_net = torch.nn.Linear(2, 1)
values = value_net(torch.nan_to_num(observations, nan=-1.0))
stored_obs_valid = torch.isfinite(m.get_tensor_by_name("observations")[:3]).float()
values.sum().backward()
