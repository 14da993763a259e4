# label: hazard silent
# why: FeatureExtractorHandle appends the hooked conv output itself (no clone); the next nn.ReLU(inplace=True) in the encoder then overwrites it, so the extracted "conv" features are silently the post-ReLU values
# source: https://github.com/KamitaniLab/bdpy/issues/16
import torch
import torch.nn as nn

torch.manual_seed(0)


class FeatureExtractor(object):
    def __init__(self, encoder, layers=None, layer_mapping=None, device='cpu', detach=True):
        self._encoder = encoder
        self.__layers = layers
        self.__layer_map = layer_mapping
        self.__detach = detach
        self.__device = device

        self._extractor = FeatureExtractorHandle()

        self._encoder.to(self.__device)

        for layer in self.__layers:
            if self.__layer_map is not None:
                layer = self.__layer_map[layer]
            eval('self._encoder.{}.register_forward_hook(self._extractor)'.format(layer))

    def __call__(self, x) -> dict:
        return self.run(x)

    def run(self, x) -> dict:
        self._extractor.clear()
        if not isinstance(x, torch.Tensor):
            xt = torch.tensor(x, device=self.__device).unsqueeze(0)
        else:
            xt = x

        self._encoder.forward(xt)

        features = {
            layer: self._extractor.outputs[i]
            for i, layer in enumerate(self.__layers)
        }
        if self.__detach:
            features = {
                k: v.cpu().detach()
                for k, v in features.items()
            }

        return features


class FeatureExtractorHandle(object):
    def __init__(self):
        self.outputs = []

    def __call__(self, module, module_in, module_out):
        self.outputs.append(module_out)

    def clear(self):
        self.outputs = []


class VGG19(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, 8, 3, padding=1),
            nn.ReLU(inplace=True),  # <-- IPL002: overwrites features[0]'s output, which the hook stored without cloning
            nn.Conv2d(8, 8, 3, padding=1),
            nn.ReLU(inplace=True),
            nn.MaxPool2d(2),
        )
        self.classifier = nn.Sequential(nn.Flatten(), nn.Linear(8 * 4 * 4, 10))

    def forward(self, x):
        return self.classifier(self.features(x))


encoder = VGG19().eval()
layers = ['conv1_1', 'conv1_2', 'fc8']
layer_mapping = {'conv1_1': 'features[0]', 'conv1_2': 'features[2]', 'fc8': 'classifier[1]'}
extractor = FeatureExtractor(encoder, layers, layer_mapping, device='cpu', detach=True)

with torch.no_grad():
    feat = extractor(torch.rand(1, 3, 8, 8))
conv1_1 = feat['conv1_1']
conv1_2 = feat['conv1_2']
fc8 = feat['fc8']
print("conv1_1 min (should be negative for a raw conv output):", conv1_1.min().item())
print("conv1_2 mean:", conv1_2.mean().item(), "fc8:", fc8.shape)
