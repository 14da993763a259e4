# label: safe
# why: TGN writes updated memories into the memory store with index assignment and detaches it after backward; the GRU saw fancy-indexed copies, and the embedding path uses a cloned .data snapshot, so none of the in-place writes touch saved tensors
# source: https://github.com/twitter-research/tgn/issues/25 (model/tgn.py get_updated_memory/update_memory, modules/memory.py)
import torch
import torch.nn as nn

torch.manual_seed(0)


class Memory(nn.Module):
    def __init__(self, n_nodes, memory_dimension):
        super().__init__()
        self.n_nodes = n_nodes
        self.memory_dimension = memory_dimension
        self.__init_memory__()

    def __init_memory__(self):
        self.memory = torch.zeros((self.n_nodes, self.memory_dimension))
        self.last_update = torch.zeros(self.n_nodes)
        self.messages = {}

    def get_memory(self, node_idxs):
        return self.memory[node_idxs, :]

    def set_memory(self, node_idxs, values):
        self.memory[node_idxs, :] = values

    def detach_memory(self):
        self.memory.detach_()


class GRUMemoryUpdater(nn.Module):
    def __init__(self, memory, message_dimension, memory_dimension):
        super().__init__()
        self.memory = memory
        self.memory_updater = nn.GRUCell(input_size=message_dimension, hidden_size=memory_dimension)

    def update_memory(self, unique_node_ids, unique_messages, timestamps):
        memory = self.memory.get_memory(unique_node_ids)
        self.memory.last_update[unique_node_ids] = timestamps
        updated_memory = self.memory_updater(unique_messages, memory)
        self.memory.set_memory(unique_node_ids, updated_memory)

    def get_updated_memory(self, unique_node_ids, unique_messages, timestamps):
        updated_memory = self.memory.memory.data.clone()
        updated_memory[unique_node_ids] = self.memory_updater(unique_messages, updated_memory[unique_node_ids])
        updated_last_update = self.memory.last_update.data.clone()
        updated_last_update[unique_node_ids] = timestamps
        return updated_memory, updated_last_update


n_nodes, mem_dim, msg_dim = 5, 4, 3
memory = Memory(n_nodes, mem_dim)
updater = GRUMemoryUpdater(memory, msg_dim, mem_dim)
embed = nn.Linear(mem_dim, 2)
opt = torch.optim.SGD(list(updater.parameters()) + list(embed.parameters()), lr=0.1)

losses = []
for step in range(2):
    positives = torch.tensor([0, 2, 3])
    messages = torch.randn(3, msg_dim)
    timestamps = torch.full((3,), float(step + 1))
    mem_all, last_update = updater.get_updated_memory(positives, messages, timestamps)
    loss = embed(mem_all[positives]).pow(2).sum()
    opt.zero_grad()
    loss.backward()
    opt.step()
    updater.update_memory(positives, messages, timestamps)
    memory.detach_memory()
    losses.append(loss.detach())

losses = torch.stack(losses)
final_memory = memory.memory.detach().clone()
