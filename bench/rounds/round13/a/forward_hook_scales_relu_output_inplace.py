# label: hazard raises
# why: to change what each ReLU returns, the forward hook multiplies the ReLU output by its selection map in place; ReluBackward saved that output, so backward finds it at a newer version.
# source: https://github.com/pytorch/pytorch/issues/1926
import torch
import torch.nn as nn

torch.manual_seed(0)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.block1 = nn.Sequential(nn.Conv2d(3, 4, 3, padding=1), nn.BatchNorm2d(4), nn.ReLU())
        self.block2 = nn.Sequential(nn.Conv2d(4, 4, 3, padding=1), nn.BatchNorm2d(4), nn.ReLU())
        self.fc = nn.Linear(4, 2)

    def forward(self, x):
        x = self.block2(self.block1(x))
        return self.fc(x.mean(dim=(2, 3)))


def hook_forward_net(model, select_maps, layers):
    handles = []

    def make_fun(select_map):
        def fun(module, inputs, outputs):
            outputs.mul_(select_map)  # <-- IPL001: rescales the ReLU output that ReluBackward saved
        return fun

    keys0 = list(model._modules.keys())
    for key0, select_map in zip(keys0, select_maps):
        value0 = model._modules.get(key0)
        if type(value0) == torch.nn.modules.container.Sequential:
            if type(value0._modules.get('2')) == torch.nn.modules.activation.ReLU:
                relu = value0._modules.get('2')
                handles.append(relu.register_forward_hook(make_fun(select_map)))
    return handles


model = Net()
select_maps = [torch.rand(1, 4, 6, 6) + 0.5, torch.rand(1, 4, 6, 6) + 0.5]
handles = hook_forward_net(model, select_maps, layers=None)
images = torch.randn(2, 3, 6, 6)
out = model(images)
loss = nn.functional.cross_entropy(out, torch.tensor([0, 1]))
loss.backward()
