# label: safe
# why: CrossBatchMemory writes detached embeddings into its ring-buffer slices only after the loss has consumed the memory through torch.cat, which copied the old rows, so the in-place enqueue never touches a saved tensor
# source: https://github.com/KevinMusgrave/pytorch-metric-learning/issues/54
import torch
import torch.nn.functional as F

torch.manual_seed(0)


class ContrastiveLoss(torch.nn.Module):
    def __init__(self, pos_margin=0.0, neg_margin=1.0):
        super().__init__()
        self.pos_margin, self.neg_margin = pos_margin, neg_margin

    def forward(self, embeddings, labels, indices_tuple):
        a1, p, a2, n = indices_tuple
        dist = torch.cdist(embeddings, embeddings)
        pos_loss = F.relu(dist[a1, p] - self.pos_margin).mean() if len(a1) else dist.sum() * 0
        neg_loss = F.relu(self.neg_margin - dist[a2, n]).mean() if len(a2) else dist.sum() * 0
        return pos_loss + neg_loss


class CrossBatchMemory(torch.nn.Module):
    def __init__(self, loss, embedding_size, memory_size=12):
        super().__init__()
        self.loss = loss
        self.embedding_size = embedding_size
        self.memory_size = memory_size
        self.embedding_memory = torch.zeros(self.memory_size, self.embedding_size)
        self.label_memory = torch.zeros(self.memory_size).long()
        self.has_been_filled = False
        self.queue_idx = 0

    def forward(self, embeddings, labels):
        batch_size = embeddings.size(0)
        if not self.has_been_filled:
            E_mem = self.embedding_memory[: self.queue_idx]
            L_mem = self.label_memory[: self.queue_idx]
        else:
            E_mem = self.embedding_memory
            L_mem = self.label_memory
        combined_embeddings = torch.cat([embeddings, E_mem], dim=0)
        combined_labels = torch.cat([labels, L_mem], dim=0)
        indices_tuple = self.create_indices_tuple(batch_size, combined_labels)
        loss = self.loss(combined_embeddings, combined_labels, indices_tuple)
        self.add_to_memory(embeddings, labels, batch_size)
        return loss

    def add_to_memory(self, embeddings, labels, batch_size):
        end_idx = ((self.queue_idx + batch_size - 1) % (self.memory_size)) + 1
        if end_idx > self.queue_idx:
            self.embedding_memory[self.queue_idx:end_idx] = embeddings.detach()
            self.label_memory[self.queue_idx:end_idx] = labels.detach()
        else:
            se = self.memory_size - self.queue_idx
            self.embedding_memory[self.queue_idx:] = embeddings[:se].detach()
            self.embedding_memory[:end_idx] = embeddings[se:].detach()
            self.label_memory[self.queue_idx:] = labels[:se].detach()
            self.label_memory[:end_idx] = labels[se:].detach()
        prev_queue_idx = self.queue_idx
        self.queue_idx = (self.queue_idx + batch_size) % self.memory_size
        if (not self.has_been_filled) and (self.queue_idx <= prev_queue_idx):
            self.has_been_filled = True

    def create_indices_tuple(self, batch_size, combined_labels):
        same = combined_labels[:batch_size].unsqueeze(1) == combined_labels.unsqueeze(0)
        same[:, :batch_size].fill_diagonal_(False)
        a1, p = torch.where(same)
        a2, n = torch.where(~(combined_labels[:batch_size].unsqueeze(1) == combined_labels.unsqueeze(0)))
        return a1, p, a2, n


trunk = torch.nn.Sequential(torch.nn.Linear(10, 16), torch.nn.ReLU(), torch.nn.Linear(16, 4))
loss_fn = CrossBatchMemory(ContrastiveLoss(), embedding_size=4, memory_size=12)
optimizer = torch.optim.SGD(trunk.parameters(), lr=0.1)
losses = []
for it in range(4):
    data, labels = torch.randn(5, 10), torch.randint(0, 3, (5,))
    embeddings = F.normalize(trunk(data), dim=1)
    loss = loss_fn(embeddings, labels)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())
memory_snapshot = loss_fn.embedding_memory.clone()
