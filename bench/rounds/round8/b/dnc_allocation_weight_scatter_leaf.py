# label: hazard raises
# why: the allocation weights are scattered in place into a freshly made container created with requires_grad=True, i.e. a leaf that requires grad
# source: https://github.com/ypxie/pytorch-NeuCom/issues/5
import numpy as np
import torch
import torch.nn as nn

torch.manual_seed(0)


def cumprod(x, dim=1, exclusive=False):
    out = torch.cumprod(x, dim)
    if exclusive:
        out = torch.cat([torch.ones_like(out[:, :1]), out[:, :-1]], dim)
    return out


class Memory(nn.Module):
    def __init__(self, mem_slot=4, mem_size=3, batch_size=2):
        super().__init__()
        self.mem_slot = mem_slot
        self.mem_size = mem_size
        self.batch_size = batch_size

    def get_allocation_weight(self, sorted_usage, free_list):
        batch_size = free_list.size()[0]
        shifted_cumprod = cumprod(sorted_usage, dim=1, exclusive=True)
        unordered_allocation_weight = (1 - sorted_usage) * shifted_cumprod

        index_mapper = torch.from_numpy(
            np.cumsum([0] + [self.mem_slot] * (batch_size - 1))[:, np.newaxis]).expand(batch_size, self.mem_slot)
        mapped_free_list = free_list + index_mapper
        flat_unordered_allocation_weight = unordered_allocation_weight.view(-1)
        flat_mapped_free_list = mapped_free_list.view(-1)
        flat_container = torch.zeros(self.batch_size * self.mem_slot, requires_grad=True)

        flat_ordered_weights = flat_container.scatter_(0,  # <-- IPL003: in-place scatter into a leaf created with requires_grad=True
            flat_mapped_free_list,
            flat_unordered_allocation_weight
        )
        return flat_ordered_weights.view(self.batch_size, self.mem_slot)

    def update_memory(self, memory_matrix, write_weight, write_vector, erase_vector):
        write_weight = write_weight.unsqueeze(2)
        erasing = memory_matrix * (1 - torch.bmm(write_weight, erase_vector.unsqueeze(1)))
        writing = torch.bmm(write_weight, write_vector.unsqueeze(1))
        return erasing + writing

    def write(self, memory_matrix, usage_vector, write_gate, write_vector, erase_vector):
        np_new_usage_vec = usage_vector.detach().numpy()
        sort_list = np.argsort(np_new_usage_vec, axis=-1)
        free_list = torch.from_numpy(sort_list).long()
        sorted_usage = torch.gather(usage_vector, 1, free_list)
        allocation_weight = self.get_allocation_weight(sorted_usage, free_list)
        new_write_weight = write_gate * allocation_weight
        return self.update_memory(memory_matrix, new_write_weight, write_vector, erase_vector)


controller = nn.Linear(5, 4 + 1 + 3 + 3)
memory = Memory()
x = torch.randn(2, 5)
interface = controller(x)
usage_vector = torch.sigmoid(interface[:, :4])
write_gate = torch.sigmoid(interface[:, 4:5])
write_vector = interface[:, 5:8]
erase_vector = torch.sigmoid(interface[:, 8:11])
memory_matrix = torch.zeros(2, 4, 3)
new_memory = memory.write(memory_matrix, usage_vector, write_gate, write_vector, erase_vector)
loss = new_memory.pow(2).sum()
loss.backward()
