# label: hazard silent
# why: the extractor's forward hooks store a reference to each layer's output in a dict, and AlexNet's next layer is nn.ReLU(inplace=True), so the stored "features.0" conv activations are silently the post-ReLU values.
# source: https://github.com/ViCCo-Group/thingsvision/issues/44
import torch
import torch.nn as nn

torch.manual_seed(0)


class AlexNet(nn.Module):
    def __init__(self, num_classes=5):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, 4, kernel_size=3, stride=2, padding=1),
            nn.ReLU(inplace=True),  # <-- IPL002: clamps the conv output the hook stored for features.0
            nn.MaxPool2d(kernel_size=2, stride=2),
            nn.Conv2d(4, 6, kernel_size=3, padding=1),
            nn.ReLU(inplace=True),
        )
        self.avgpool = nn.AdaptiveAvgPool2d((2, 2))
        self.classifier = nn.Sequential(
            nn.Dropout(),
            nn.Linear(6 * 2 * 2, 8),
            nn.ReLU(inplace=True),
            nn.Linear(8, num_classes),
        )

    def forward(self, x):
        x = self.features(x)
        x = self.avgpool(x)
        x = torch.flatten(x, 1)
        return self.classifier(x)


class Extractor:
    def __init__(self, model):
        self.model = model

    def get_activation(self, name, activations):
        def hook(model, input, output):
            activations[name] = output
        return hook

    def register_hook(self, activations):
        handles = []
        for n, m in self.model.named_modules():
            handles.append(m.register_forward_hook(self.get_activation(n, activations)))
        return handles

    def extract_features(self, batches, module_name, flatten_acts=True):
        self.model.eval()
        features = []
        with torch.no_grad():
            for batch in batches:
                activations = {}
                handles = self.register_hook(activations)
                _ = self.model(batch)
                for h in handles:
                    h.remove()
                act = activations[module_name]
                if flatten_acts:
                    act = act.view(act.size(0), -1)
                features.append(act.cpu())
        return torch.cat(features)


model = AlexNet()
extractor = Extractor(model)
batches = [torch.randn(2, 3, 8, 8) for _ in range(2)]
features_conv1 = extractor.extract_features(batches, module_name='features.0')
negative_fraction = (features_conv1 < 0).float().mean()
