# label: hazard raises
# why: with a single trainable parameter, clip_grad_norm takes the special branch that measures and rescales the parameter itself with p.mul_(clip_coef), an in-place op on a leaf that requires grad (outside no_grad).
# source: https://github.com/facebookresearch/ParlAI/pull/3014 (parlai/utils/fp16.py clip_grad_norm, copied from fairseq)
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def clip_grad_norm(params, max_norm):
    """
    Clips grad norm.
    """
    params = list(params)
    if len(params) == 1:
        p = params[0]
        grad_norm = torch.norm(p)
        if grad_norm > max_norm > 0:
            clip_coef = max_norm / (grad_norm + 1e-6)
            p.mul_(clip_coef)  # <-- IPL003: in-place op on the parameter (a leaf requiring grad) instead of its grad
        return grad_norm
    elif max_norm > 0:
        return torch.nn.utils.clip_grad_norm_(params, max_norm)
    else:
        return torch.sqrt(sum(p.grad.data.norm() ** 2 for p in params if p.grad is not None))


def has_overflow(grad_norm):
    if grad_norm == float('inf') or grad_norm != grad_norm:
        return True
    return False


class DynamicLossScaler(object):
    def __init__(self, init_scale=2.0 ** 4, scale_factor=2.0):
        self.loss_scale = init_scale
        self.scale_factor = scale_factor

    def update_scale(self, overflow):
        if overflow:
            self.loss_scale /= self.scale_factor


class MemoryEfficientFP16Optimizer(object):
    def __init__(self, init_optimizer, loss_initial_scale=2.0 ** 4):
        self.optimizer = init_optimizer
        self.params = [p for group in init_optimizer.param_groups for p in group['params']]
        self.scaler = DynamicLossScaler(init_scale=loss_initial_scale)
        self.min_loss_scale = 2 ** -5
        self._grads_are_scaled = False

    def backward(self, loss):
        loss = loss * self.scaler.loss_scale
        loss.backward()
        self._grads_are_scaled = True

    def _unscale_grads(self, multiply_grads=1.0):
        if self._grads_are_scaled:
            self._grads_are_scaled = False
            multiply_grads = multiply_grads / self.scaler.loss_scale
            for p in self.params:
                if p.grad is not None:
                    p.grad.data.mul_(multiply_grads)

    def clip_master_grads(self, gradient_clip):
        self._unscale_grads()
        grad_norm = clip_grad_norm(self.params, gradient_clip)
        overflow = has_overflow(grad_norm)
        self.scaler.update_scale(overflow)
        if overflow:
            self.optimizer.zero_grad()
            return -1
        return grad_norm

    def step(self):
        self._unscale_grads()
        self.optimizer.step()

    def zero_grad(self):
        self.optimizer.zero_grad()
        self._grads_are_scaled = False


class TaskTokenModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Linear(6, 6)
        self.task_embeddings = nn.Embedding(3, 6)
        self.head = nn.Linear(6, 2)

    def forward(self, x, task_ids):
        return self.head(torch.tanh(self.encoder(x) + self.task_embeddings(task_ids)))


model = TaskTokenModel()
# freeze everything but the task token embedding
for name, p in model.named_parameters():
    p.requires_grad = name.startswith('task_embeddings')
optimizer = MemoryEfficientFP16Optimizer(
    torch.optim.SGD([p for p in model.parameters() if p.requires_grad], lr=0.1))

x = torch.randn(5, 6)
task_ids = torch.tensor([0, 1, 2, 1, 0])
labels = torch.tensor([0, 1, 1, 0, 1])

optimizer.zero_grad()
loss = F.cross_entropy(model(x, task_ids), labels)
optimizer.backward(loss)
grad_norm = optimizer.clip_master_grads(0.1)
optimizer.step()
embedding_after = model.task_embeddings.weight.detach().clone()
