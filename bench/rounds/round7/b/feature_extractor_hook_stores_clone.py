# label: safe
# why: fixed extractor hook stores output.detach().clone(), so the later in-place ReLU only overwrites the network's own activation, not the copy handed to the user.
# source: https://github.com/ViCCo-Group/thingsvision/issues/44
import torch
import torch.nn as nn

torch.manual_seed(0)


class AlexNet(nn.Module):
    def __init__(self, num_classes=10):
        super(AlexNet, self).__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, 8, kernel_size=3, stride=2, padding=1),
            nn.ReLU(inplace=True),
            nn.MaxPool2d(kernel_size=2, stride=2),
            nn.Conv2d(8, 16, kernel_size=3, padding=1),
            nn.ReLU(inplace=True),
        )
        self.avgpool = nn.AdaptiveAvgPool2d((2, 2))
        self.classifier = nn.Sequential(
            nn.Linear(16 * 2 * 2, 32),
            nn.ReLU(inplace=True),
            nn.Linear(32, num_classes),
        )

    def forward(self, x):
        x = self.features(x)
        x = self.avgpool(x)
        x = torch.flatten(x, 1)
        return self.classifier(x)


class Extractor:
    def __init__(self, model):
        self.model = model
        self.model.eval()

    def get_activation(self, name, activations):
        def hook(model, input, output):
            try:
                activations.update({name: output.detach().clone()})
            except AttributeError:
                activations.update({name: output[0].detach()})
        return hook

    def register_hook(self, module_name, activations):
        for n, m in self.model.named_modules():
            if n == module_name:
                m.register_forward_hook(self.get_activation(n, activations))

    def extract_features(self, batches, module_name, flatten_acts=True):
        activations = {}
        self.register_hook(module_name, activations)
        features = []
        with torch.no_grad():
            for batch in batches:
                _ = self.model(batch)
                act = activations[module_name]
                if flatten_acts:
                    act = act.view(act.size(0), -1)
                features.append(act)
        return torch.cat(features, dim=0)


model = AlexNet()
extractor = Extractor(model)
batches = [torch.randn(2, 3, 16, 16) for _ in range(3)]
conv1_features = extractor.extract_features(batches, module_name="features.0")
num_negative = (conv1_features < 0).sum()
