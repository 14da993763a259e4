# label: safe
# why: the reverse recurrence writes each step into a fresh zeros_like buffer; the slice copies are recorded by autograd and nothing saved for backward is overwritten, so gradients still reach the student log-probs.
# source: https://github.com/huggingface/trl/pull/6635
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class Student(nn.Module):
    def __init__(self, vocab=9, dim=6):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.head = nn.Linear(dim, vocab)

    def forward(self, ids):
        return self.head(torch.relu(self.embed(ids)))


class MiniLLMTrainer:
    def __init__(self, model, gamma=0.9):
        self.model = model
        self.gamma = gamma

    def compute_advantages(self, rewards):
        response_length = rewards.shape[1]
        # advantages_t = sum_{i>=t} gamma^(i-t) R_i, computed by the reverse recurrence
        advantages = torch.zeros_like(rewards)
        running_advantage = torch.zeros_like(rewards[:, 0])
        for t in range(response_length - 1, -1, -1):
            running_advantage = rewards[:, t] + self.gamma * running_advantage
            advantages[:, t] = running_advantage
        return advantages

    def compute_loss(self, ids, teacher_logps):
        logits = self.model(ids)
        logps = torch.gather(F.log_softmax(logits, -1), -1, ids.unsqueeze(-1)).squeeze(-1)
        rewards = teacher_logps - logps  # reverse-KL style per-token reward, differentiable
        advantages = self.compute_advantages(rewards)
        lengths = torch.full((ids.shape[0],), ids.shape[1], dtype=logps.dtype)
        loss = -(advantages * logps).sum(1) / lengths
        return loss.mean()


trainer = MiniLLMTrainer(Student())
ids = torch.randint(0, 9, (3, 6))
teacher_logps = -torch.rand(3, 6)
loss = trainer.compute_loss(ids, teacher_logps)
loss.backward()
model = trainer.model
