# label: hazard raises
# why: F.relu saves its own output for ReluBackward, and the model immediately applies F.relu_ to that same output in place.
# source: https://github.com/pytorch/pytorch/issues/148835
import torch

torch.manual_seed(0)
torch.set_grad_enabled(True)


class SimpleModel(torch.nn.Module):
    def __init__(self):
        super(SimpleModel, self).__init__()
        self.linear = torch.nn.Linear(10, 10)

    def forward(self, x):
        x = self.linear(x)
        x = torch.nn.functional.relu(x)
        x = torch.nn.functional.relu_(x)  # <-- IPL001: overwrites the output ReluBackward saved
        return x


model = SimpleModel()
inputs = torch.randn(1, 10)
compiled_model = model
compiled_out = compiled_model(*inputs)
compiled_out.sum().backward()
