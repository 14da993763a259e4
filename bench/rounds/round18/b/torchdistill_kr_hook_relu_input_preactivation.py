# label: hazard silent
# why: the Knowledge Review config hooks the *input* of each last block's ReLU to get pre-activation features, but torchvision blocks use ReLU(inplace=True) and forward hooks fire after forward, so the recorded "pre-activation" tensors are already rectified
# source: https://github.com/yoshitomo-matsubara/torchdistill/commit/c67e162f2924d7e837ecc31e81ee3b15350a3cb3
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class BasicBlock(nn.Module):
    def __init__(self, inplanes, planes, stride=1):
        super().__init__()
        self.conv1 = nn.Conv2d(inplanes, planes, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(planes)
        self.relu = nn.ReLU(inplace=True)  # <-- IPL002: rectifies the tensor the forward hook later reads as "pre-activation"
        self.conv2 = nn.Conv2d(planes, planes, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(planes)
        self.downsample = None
        if stride != 1 or inplanes != planes:
            self.downsample = nn.Sequential(nn.Conv2d(inplanes, planes, 1, stride, bias=False), nn.BatchNorm2d(planes))

    def forward(self, x):
        identity = x
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        if self.downsample is not None:
            identity = self.downsample(x)
        out += identity
        out = self.relu(out)
        return out


class ResNet(nn.Module):
    def __init__(self, widths, num_classes=5):
        super().__init__()
        self.conv1 = nn.Conv2d(3, widths[0], 3, 1, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(widths[0])
        self.relu = nn.ReLU(inplace=True)
        self.layer1 = nn.Sequential(BasicBlock(widths[0], widths[0]))
        self.layer2 = nn.Sequential(BasicBlock(widths[0], widths[1], stride=2))
        self.avgpool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(widths[1], num_classes)

    def forward(self, x):
        x = self.relu(self.bn1(self.conv1(x)))
        x = self.layer2(self.layer1(x))
        return self.fc(torch.flatten(self.avgpool(x), 1))


def get_module(root, path):
    module = root
    for name in path.split('.'):
        module = module[int(name)] if name.lstrip('-').isdigit() else getattr(module, name)
    return module


class ForwardHookManager:
    def __init__(self):
        self.io_dict = {}
        self.handles = []

    def add_hook(self, model, module_path, requires_input=True, requires_output=False):
        module = get_module(model, module_path)

        def forward_hook(module, input, output):
            if requires_input:
                self.io_dict.setdefault(module_path, {})['input'] = input[0]
            if requires_output:
                self.io_dict.setdefault(module_path, {})['output'] = output
        self.handles.append(module.register_forward_hook(forward_hook))

    def pop_io_dict(self):
        io_dict, self.io_dict = self.io_dict, {}
        return io_dict


def hcl(fstudent, fteacher):
    loss_all = 0.0
    for fs, ft in zip(fstudent, fteacher):
        n, c, h, w = fs.shape
        loss = F.mse_loss(fs, ft, reduction='mean')
        cnt, tot = 1.0, 1.0
        for l in [2, 1]:
            if l >= h:
                continue
            tmpfs = F.adaptive_avg_pool2d(fs, (l, l))
            tmpft = F.adaptive_avg_pool2d(ft, (l, l))
            cnt /= 2.0
            loss += F.mse_loss(tmpfs, tmpft, reduction='mean') * cnt
            tot += cnt
        loss_all = loss_all + loss / tot
    return loss_all


teacher = ResNet([8, 16]).eval()
student = ResNet([4, 8])
abf_modules = nn.ModuleList([nn.Conv2d(4, 8, 1), nn.Conv2d(8, 16, 1)])
paths = ['layer1.-1.relu', 'layer2.-1.relu']
teacher_hooks, student_hooks = ForwardHookManager(), ForwardHookManager()
for path in paths:
    teacher_hooks.add_hook(teacher, path, requires_input=True)
    student_hooks.add_hook(student, path, requires_input=True)

images = torch.randn(4, 3, 8, 8)
targets = torch.randint(0, 5, (4,))
with torch.no_grad():
    teacher(images)
teacher_io = teacher_hooks.pop_io_dict()
student_logits = student(images)
student_io = student_hooks.pop_io_dict()

teacher_feats = [teacher_io[p]['input'] for p in paths]
student_feats = [abf(student_io[p]['input']) for abf, p in zip(abf_modules, paths)]
kr_loss = hcl(student_feats, teacher_feats)
loss = F.cross_entropy(student_logits, targets) + kr_loss
loss.backward()
teacher_layer2_preact = teacher_feats[1]
