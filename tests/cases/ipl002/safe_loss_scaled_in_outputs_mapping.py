# label: safe
# why: the loss taken out of the model's output mapping is scaled in place and returned with the mapping; both hold the scaled loss, which is what the caller reads
import torch
import torch.nn as nn

torch.manual_seed(0)


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 1)

    def forward(self, x, y):
        pred = self.fc(x)
        return {"loss": ((pred - y) ** 2).mean(), "pred": pred}


def compute_loss(model, inputs, scale, loss_func=None, return_outputs=False):
    outputs = model(**inputs)
    if loss_func is not None:
        loss = loss_func(outputs, inputs["y"])
    else:
        loss = outputs["loss"] if isinstance(outputs, dict) else outputs[0]
    if scale != 1:
        loss *= scale
    return (loss, outputs) if return_outputs else loss


model = Model()
batch = {"x": torch.randn(8, 4), "y": torch.randn(8, 1)}
loss = compute_loss(model, batch, 4)
loss.backward()
