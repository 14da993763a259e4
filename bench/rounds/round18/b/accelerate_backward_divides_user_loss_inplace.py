# label: hazard silent
# why: Accelerator.backward scales the caller's loss with loss /= gradient_accumulation_steps, so the loss tensor the training loop logs afterwards is silently divided as well
# source: https://github.com/huggingface/accelerate/pull/676
import torch
import torch.nn as nn

torch.manual_seed(0)


class DistributedType:
    NO = "NO"
    DEEPSPEED = "DEEPSPEED"


class Accelerator:
    def __init__(self, gradient_accumulation_steps=1):
        self.gradient_accumulation_steps = gradient_accumulation_steps
        self.distributed_type = DistributedType.NO
        self.scaler = None

    def prepare(self, *args):
        return args

    def backward(self, loss, **kwargs):
        """Use `accelerator.backward(loss)` in lieu of `loss.backward()`."""
        loss /= self.gradient_accumulation_steps  # <-- IPL004: divides the training loop's own loss tensor
        if self.scaler is not None:
            self.scaler.scale(loss).backward(**kwargs)
        else:
            loss.backward(**kwargs)


model = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 3))
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
accelerator = Accelerator(gradient_accumulation_steps=4)
model, optimizer = accelerator.prepare(model, optimizer)

batches = [(torch.randn(5, 6), torch.randint(0, 3, (5,))) for _ in range(4)]
total_loss = torch.zeros(())
logged = []
for step, (inputs, labels) in enumerate(batches):
    outputs = model(inputs)
    loss = nn.functional.cross_entropy(outputs, labels)
    accelerator.backward(loss)
    total_loss = total_loss + loss.detach()
    logged.append(loss.detach().clone())
    if (step + 1) % accelerator.gradient_accumulation_steps == 0:
        optimizer.step()
        optimizer.zero_grad()

epoch_loss = total_loss / len(batches)
